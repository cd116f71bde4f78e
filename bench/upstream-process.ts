/**
 * The fake upstream, its own process: OpenAI Chat Completions SSE on any path, Anthropic Messages
 * SSE on a path ending in `/messages`. The model name sets the pacing (`bench-pace-20`: 20 ms
 * between chunks); otherwise each chunk goes out in its own event-loop turn, so the chunks leave
 * as separate writes as fast as the process can. Reports its port and answers CPU samples over
 * IPC; exits with its parent.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerSamples } from './process-sample.ts';
import { paceFromModel, type ScriptedStream, scriptedStream, type UpstreamProtocol } from './upstream-frames.ts';

const cache = new Map<string, ScriptedStream>();

function streamFor(protocol: UpstreamProtocol, model: string): ScriptedStream {
  const key = `${protocol}:${model}`;
  let stream = cache.get(key);
  if (!stream) {
    stream = scriptedStream(protocol, model);
    cache.set(key, stream);
  }
  return stream;
}

function play(res: ServerResponse, stream: ScriptedStream, paceMs: number): void {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  res.write(stream.head);
  const started = performance.now();
  let next = 0;
  const step = () => {
    if (res.destroyed) return;
    if (next < stream.tokens.length) {
      res.write(stream.tokens[next++]);
      schedule();
    } else {
      res.end(stream.tail);
    }
  };
  // Paced chunks are due at fixed offsets from the start, so timer lateness does not accumulate.
  const schedule = () => {
    if (paceMs === 0) setImmediate(step);
    else setTimeout(step, Math.max(0, started + (next + 1) * paceMs - performance.now()));
  };
  schedule();
}

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (c: Buffer) => parts.push(c));
  req.on('end', () => {
    if (req.method !== 'POST') {
      res.writeHead(404).end();
      return;
    }
    let model = '';
    try {
      model = String((JSON.parse(Buffer.concat(parts).toString('utf8')) as { model?: unknown }).model ?? '');
    } catch {
      res.writeHead(400).end('body is not JSON');
      return;
    }
    const protocol: UpstreamProtocol = (req.url ?? '').split('?', 1)[0].endsWith('/messages') ? 'anthropic' : 'openai';
    play(res, streamFor(protocol, model), paceFromModel(model));
  });
});

server.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port });
});
answerSamples();
// The parent owns this process: when its IPC channel closes (exit, crash, kill), stop too.
process.on('disconnect', () => process.exit(0));
