/**
 * The yardstick for sluice's CPU figure: the "minimal hand-written Node proxy that parses and
 * re-serializes each chunk" that issue 2 compares sluice with, measured in the same run on the
 * same core, so the figure can be read on any machine. node:http in, undici to the fake upstream
 * (`BENCH_UPSTREAM_URL`), every `data:` frame JSON.parse'd, given the proxy's own id and the
 * client's model name, JSON.stringify'd, and each upstream read's frames written at once.
 *
 * Deliberately nothing else: no validation, accounting, timeouts, heartbeats, error frames,
 * cancellation or backpressure. It is not a design to copy, only the floor such a proxy costs.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { answerSamples } from './process-sample.ts';

const upstream = process.env.BENCH_UPSTREAM_URL;
if (!upstream) throw new Error('BENCH_UPSTREAM_URL must be set');
const agent = new Agent({ connections: 256, keepAliveTimeout: 60_000 });
let served = 0;

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (part: Buffer) => parts.push(part));
  req.on('end', () => {
    proxy(Buffer.concat(parts).toString('utf8'), res).catch(() => res.destroy());
  });
});

async function proxy(text: string, res: import('node:http').ServerResponse): Promise<void> {
  const body = JSON.parse(text) as { model: string };
  const clientModel = body.model;
  body.model = clientModel.slice(clientModel.indexOf('/') + 1);
  const id = `chatcmpl-ref${(served++).toString(36)}`;
  const up = await request(`${upstream}/v1/chat/completions`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
    body: JSON.stringify(body),
  });
  res.writeHead(up.statusCode, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  let pending = '';
  for await (const read of up.body) {
    pending += (read as Buffer).toString('utf8');
    let out = '';
    for (let end = pending.indexOf('\n\n'); end >= 0; end = pending.indexOf('\n\n')) {
      const data = pending.slice('data: '.length, end);
      pending = pending.slice(end + 2);
      if (data === '[DONE]') {
        out += 'data: [DONE]\n\n';
        continue;
      }
      const chunk = JSON.parse(data) as { id: string; model: string };
      chunk.id = id;
      chunk.model = clientModel;
      out += `data: ${JSON.stringify(chunk)}\n\n`;
    }
    if (out) res.write(out);
  }
  res.end();
}

server.listen(0, '127.0.0.1', () => {
  answerSamples();
  process.on('disconnect', () => process.exit(0));
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port });
});
