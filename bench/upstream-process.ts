/**
 * The fake upstream, its own process: OpenAI Chat Completions SSE on any path, Anthropic Messages
 * SSE on a path ending in `/messages`, and a 256-byte `chat.completion` for a Chat Completions
 * request without `stream: true` (the unary mode). The model name sets the pacing (`bench-pace-20`: 20 ms
 * between chunks) and may set the length (`-tokens-150`, the soak's); unpaced, the whole stream
 * leaves in one write (fast mode: one or two reads at the gateway). Reports its port and answers CPU samples over
 * IPC; exits with its parent.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerSamples } from './process-sample.ts';
import {
  paceFromModel,
  type ScriptedStream,
  scriptedStream,
  tokensFromModel,
  type UpstreamProtocol,
  unaryCompletion,
} from './upstream-frames.ts';

const cache = new Map<string, ScriptedStream>();
const unaryCache = new Map<string, Buffer>();

/** The unary mode's answer, one write with its length, as a non-streaming upstream sends it. */
function answerUnary(res: ServerResponse, model: string): void {
  let body = unaryCache.get(model);
  if (!body) {
    body = unaryCompletion(model);
    unaryCache.set(model, body);
  }
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length }).end(body);
}

function streamFor(protocol: UpstreamProtocol, model: string): ScriptedStream {
  const key = `${protocol}:${model}`;
  let stream = cache.get(key);
  if (!stream) {
    stream = scriptedStream(protocol, model);
    cache.set(key, stream);
  }
  return stream;
}

/** Fast mode's whole streams, by stream and length: built once, written in one go. */
const wholeStreams = new WeakMap<ScriptedStream, Map<number, Buffer>>();

function wholeStream(stream: ScriptedStream, tokens: number): Buffer {
  let byLength = wholeStreams.get(stream);
  if (!byLength) wholeStreams.set(stream, (byLength = new Map()));
  let bytes = byLength.get(tokens);
  if (!bytes) {
    const parts = [
      stream.head,
      ...Array.from({ length: tokens }, (_, i) => stream.tokens[i % stream.tokens.length]),
      stream.tail,
    ];
    byLength.set(tokens, (bytes = Buffer.concat(parts)));
  }
  return bytes;
}

function play(res: ServerResponse, stream: ScriptedStream, paceMs: number, tokens: number): void {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  // Fast mode: the whole stream in one write, so the gateway gets it in one or two reads and its
  // fixed cost per request is what is measured (issue 29: the second harness's fast mode).
  if (paceMs === 0) {
    res.end(wholeStream(stream, tokens));
    return;
  }
  res.write(stream.head);
  const started = performance.now();
  let next = 0;
  const step = () => {
    if (res.destroyed) return;
    if (next < tokens) {
      res.write(stream.tokens[next++ % stream.tokens.length]);
      schedule();
    } else {
      res.end(stream.tail);
    }
  };
  // Paced chunks are due at fixed offsets from the start, so timer lateness does not accumulate.
  const schedule = () => {
    setTimeout(step, Math.max(0, started + (next + 1) * paceMs - performance.now()));
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
    // The governed gateways' analytics export (gateway-process.ts): an OTLP/HTTP logs collector
    // that takes every batch, so that the export's cost is the gateway's and not a retry loop's.
    if ((req.url ?? '').endsWith('/v1/logs')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      return;
    }
    let model = '';
    let stream = false;
    try {
      const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { model?: unknown; stream?: unknown };
      model = String(body.model ?? '');
      stream = body.stream === true;
    } catch {
      res.writeHead(400).end('body is not JSON');
      return;
    }
    const protocol: UpstreamProtocol = (req.url ?? '').split('?', 1)[0].endsWith('/messages') ? 'anthropic' : 'openai';
    if (!stream && protocol === 'openai') {
      answerUnary(res, model);
      return;
    }
    const scripted = streamFor(protocol, model);
    play(res, scripted, paceFromModel(model), tokensFromModel(model) ?? scripted.tokens.length);
  });
});

server.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port });
});
answerSamples();
// The parent owns this process: when its IPC channel closes (exit, crash, kill), stop too.
process.on('disconnect', () => process.exit(0));
