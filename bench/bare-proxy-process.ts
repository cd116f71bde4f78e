/**
 * The floor every figure is divided by (issue 15): a proxy that pipes bytes unchanged. node:http
 * in, undici to the fake upstream (`BENCH_UPSTREAM_URL`) on the same path, the request body passed
 * on as it came and the upstream's response body piped through as it arrives, with no parsing of
 * either. The
 * client speaks the upstream's protocol (OpenAI-compatible or Anthropic), so the bytes it reads
 * are exactly the upstream's.
 *
 * Deliberately nothing else: no model routing, ids, validation, accounting, timeouts, error frames
 * or backpressure (like the reference proxy), so it is the least any Node proxy of this shape costs.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { answerSamples } from './process-sample.ts';

const upstream = process.env.BENCH_UPSTREAM_URL;
if (!upstream) throw new Error('BENCH_UPSTREAM_URL must be set');
const agent = new Agent({ connections: 512, keepAliveTimeout: 60_000 });

/** The request headers the fake upstream reads; hop-by-hop ones stay on this hop. */
const FORWARDED = ['content-type', 'authorization', 'x-api-key', 'anthropic-version'] as const;

/** The response headers a client needs: with the length, a unary answer leaves unchunked, as it came. */
const RETURNED = ['content-type', 'content-length'] as const;

function pick(from: IncomingMessage['headers'], names: readonly string[]): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of names) {
    const value = from[name];
    if (typeof value === 'string') picked[name] = value;
  }
  return picked;
}

/**
 * The request body is small and whole before any proxy can route it, so it goes on as one buffer:
 * a streamed request body would cost undici a chunked upload per request, more than sluice pays.
 */
async function proxy(req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<void> {
  const up = await request(`${upstream}${req.url ?? '/'}`, {
    method: 'POST',
    dispatcher: agent,
    headers: pick(req.headers, FORWARDED),
    body,
  });
  res.writeHead(up.statusCode, pick(up.headers as IncomingMessage['headers'], RETURNED));
  // Each upstream read written at once, as the reference proxy does, so that the two differ only
  // by its parsing and re-serializing.
  for await (const read of up.body) res.write(read);
  res.end();
}

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (part: Buffer) => parts.push(part));
  req.on('end', () => {
    proxy(req, parts.length === 1 ? parts[0] : Buffer.concat(parts), res).catch(() => res.destroy());
  });
});

server.listen(0, '127.0.0.1', () => {
  answerSamples();
  process.on('disconnect', () => process.exit(0));
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port });
});
