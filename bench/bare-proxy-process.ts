/**
 * The floor every figure is divided by (issue 15): a proxy that pipes bytes unchanged. node:http
 * in, undici to the fake upstream (`BENCH_UPSTREAM_URL`) on the same path, the request body and
 * the upstream's response body piped through as they arrive, with no parsing of either. The
 * client speaks the upstream's protocol (OpenAI-compatible or Anthropic), so the bytes it reads
 * are exactly the upstream's.
 *
 * Deliberately nothing else: no model routing, ids, validation, accounting, timeouts or error
 * frames. Only `pipeline`'s backpressure, which any proxy needs not to buffer without bound.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { Agent, request } from 'undici';
import { answerSamples } from './process-sample.ts';

const upstream = process.env.BENCH_UPSTREAM_URL;
if (!upstream) throw new Error('BENCH_UPSTREAM_URL must be set');
const agent = new Agent({ connections: 512, keepAliveTimeout: 60_000 });

/** The request headers the fake upstream reads; hop-by-hop ones stay on this hop. */
const FORWARDED = ['content-type', 'authorization', 'x-api-key', 'anthropic-version'] as const;

async function proxy(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  for (const name of FORWARDED) {
    const value = req.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  const up = await request(`${upstream}${req.url ?? '/'}`, {
    method: 'POST',
    dispatcher: agent,
    headers,
    body: req,
  });
  const contentType = up.headers['content-type'];
  res.writeHead(up.statusCode, typeof contentType === 'string' ? { 'content-type': contentType } : {});
  await pipeline(up.body, res);
}

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  proxy(req, res).catch(() => res.destroy());
});

server.listen(0, '127.0.0.1', () => {
  answerSamples();
  process.on('disconnect', () => process.exit(0));
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port });
});
