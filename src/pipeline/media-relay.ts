import type { ServerResponse } from 'node:http';
import { errors } from '../errors/catalog.ts';
import { type GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import { renderStreamError } from '../errors/render.ts';
import { upstreamHttpError } from '../errors/upstream-error.ts';
import { asObject } from '../protocol/as-object.ts';
import type { Usage } from '../protocol/canonical/usage.ts';
import { createSseFramer, type SseFrame } from '../protocol/sse/parse-upstream.ts';
import type { MediaCall } from '../providers/types.ts';
import { upstreamFailure, type UpstreamResponse } from '../upstream/http-client.ts';
import type { RunScope } from './model-operation.ts';
import { routedMedia } from './routed-calls.ts';

/** A whole answer larger than this is refused (502) rather than held: four 4K images as base64 fit well within. */
const MAX_WHOLE_ANSWER = 256 * 1024 * 1024;
/** One streamed event may carry a whole image as base64: a 1536x1024 PNG is a few MB. */
const MAX_STREAM_EVENT = 64 * 1024 * 1024;

/** An upstream's whole answer as it came: its bytes and type, and its JSON when it is JSON. */
export interface WholeAnswer {
  bytes: Buffer;
  contentType: string;
  json: unknown;
}

/** What the relay reports to the accountant of an answer (the surface knows its API's usage). */
export interface MediaUsage {
  /** The usage the answer reports, with its media units; undefined when it reports none. */
  usage: Usage | undefined;
  /** The answer's text, when it is text and reports no usage (a transcript as `text`): counted as the output. */
  text?: string;
}

/** How a surface reads its API's usage: from a whole answer, and from the events of a stream. */
export interface MediaReaders {
  whole: (answer: WholeAnswer) => MediaUsage;
  /** The usage an event of a stream carries (the one that ends an image or a transcript), else undefined. */
  event: (type: string, event: Record<string, unknown>) => Usage | undefined;
}

/**
 * A media answer relayed as it came, by what the upstream sent: an event stream (`stream: true`:
 * partial images, transcript deltas, speech as SSE) is passed on as it arrives; anything else (a
 * JSON answer, a transcript as text, SRT or VTT, and the answer of a server that ignored
 * `stream`) is read whole inside the attempt, so that a body that fails falls back like an error,
 * and sent under the upstream's Content-Type.
 */
export async function relayMedia(run: RunScope, call: MediaCall, readers: MediaReaders): Promise<GatewayError | null> {
  const provider = run.accountant.target.provider;
  const outcome = await routedMedia(
    run,
    call,
    async (res, signal): Promise<{ stream: UpstreamResponse } | { whole: WholeAnswer }> =>
      isEventStream(res) ? { stream: res } : { whole: await readAnswer(res, provider, call, signal) },
  );
  if (!outcome.ok) return outcome.failure;
  run.accountant.markAcknowledged();
  const answer = outcome.value;
  if ('stream' in answer) return relayEvents(run, answer.stream, readers.event);
  sendWhole(run, answer.whole, readers.whole);
  return null;
}

function isEventStream(res: UpstreamResponse): boolean {
  return String(res.headers['content-type'] ?? '')
    .toLowerCase()
    .startsWith('text/event-stream');
}

async function readAnswer(res: UpstreamResponse, provider: string, call: MediaCall, signal: AbortSignal): Promise<WholeAnswer> {
  const bytes = await readWhole(res, provider, signal);
  const contentType = String(res.headers['content-type'] ?? 'application/json');
  let json: unknown;
  if (contentType.toLowerCase().includes('json')) {
    try {
      json = JSON.parse(bytes.toString('utf8'));
    } catch {
      throw errors.malformed(provider, `${call.path} answer is not JSON: ${bytes.subarray(0, 200).toString('utf8')}`);
    }
  }
  return { bytes, contentType, json };
}

/** A whole answer: its usage to the accountant, its bytes to the client as they came. */
function sendWhole(run: RunScope, answer: WholeAnswer, usageOf: MediaReaders['whole']): void {
  const { accountant, exchange } = run;
  const { usage, text } = usageOf(answer);
  if (usage) accountant.observe({ type: 'usage', usage });
  else if (text) accountant.observe({ type: 'text', choice: 0, text });
  accountant.observe({ type: 'finish', choice: 0, reason: 'stop' });
  accountant.outputStarted();
  const { res } = exchange;
  if (res.headersSent || res.destroyed) return;
  res.writeHead(200, {
    'Content-Type': answer.contentType,
    'Content-Length': answer.bytes.length,
    'X-Request-ID': exchange.requestId,
  });
  res.end(answer.bytes);
}

/**
 * An event stream relayed byte for byte as it arrives. Each event is read for what the accountant
 * needs (`usageOfEvent`); an upstream error event ends it as the request's failure; a stream
 * that breaks gets an OpenAI `error` event.
 */
async function relayEvents(
  run: RunScope,
  upstream: UpstreamResponse,
  usageOfEvent: MediaReaders['event'],
): Promise<GatewayError | null> {
  const { accountant, exchange, scope } = run;
  const provider = accountant.target.provider;
  let failure: GatewayError | null = null;
  const usages: Usage[] = [];
  const framer = createSseFramer({
    maxBufferSize: MAX_STREAM_EVENT,
    onFrame: (frame) => {
      const event = eventOf(frame);
      if (!event) return;
      const type = typeof event.type === 'string' ? event.type : (frame.event ?? '');
      if (type === 'error') failure ??= streamError(provider, event);
      const usage = usageOfEvent(type, event);
      if (usage) usages.push(usage);
    },
    onInvalid: (detail) => {
      failure ??= errors.malformed(provider, detail);
    },
  });
  exchange.res.writeHead(200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
    'X-Request-ID': exchange.requestId,
    'X-Accel-Buffering': 'no',
  });
  const broke = await pipeBody(upstream, exchange.res, scope.signal, provider, (chunk) => {
    accountant.outputStarted();
    framer.push(chunk);
  });
  if (!broke) framer.end();
  const usage = sumUsage(usages);
  if (usage) accountant.observe({ type: 'usage', usage });
  const ended = broke ?? failure;
  if (ended === null) accountant.observe({ type: 'finish', choice: 0, reason: 'stop' });
  // A stream that broke ends with an error event the client's SDK raises (the upstream's own was relayed as it came).
  if (broke) writeLast(exchange.res, `event: error\ndata: ${withType(renderStreamError(broke))}\n\n`);
  else if (!exchange.res.writableEnded) exchange.res.end();
  return ended;
}

/**
 * Audio relayed as it arrives (POST /v1/audio/speech), never held whole: the first bytes reach
 * the client as soon as the upstream sends them, under its Content-Type. Audio reports no usage:
 * `usageOf` makes it from the request (its characters, its counted tokens) once it is sent. A
 * stream that breaks is cut: audio has no error frame, and the client sees the connection end early.
 */
export async function relayMediaBytes(
  run: RunScope,
  call: MediaCall,
  usageOf: () => Promise<Usage>,
): Promise<GatewayError | null> {
  const outcome = await routedMedia(run, call, (res) => Promise.resolve(res));
  if (!outcome.ok) return outcome.failure;
  const { accountant, exchange, scope } = run;
  accountant.markAcknowledged();
  const headers: Record<string, string> = {
    'Content-Type': String(outcome.value.headers['content-type'] ?? 'application/octet-stream'),
    'X-Request-ID': exchange.requestId,
  };
  exchange.res.writeHead(200, headers);
  const broke = await pipeBody(outcome.value, exchange.res, scope.signal, accountant.target.provider, () =>
    accountant.outputStarted(),
  );
  accountant.observe({ type: 'usage', usage: await usageOf() });
  if (broke) {
    exchange.res.destroy();
    return broke;
  }
  accountant.observe({ type: 'finish', choice: 0, reason: 'stop' });
  if (!exchange.res.writableEnded) exchange.res.end();
  return null;
}

/**
 * The upstream's body written to the client chunk by chunk, each write waited for when the client
 * reads slower than the upstream sends (the upstream read pauses meanwhile). Resolves to null at
 * its end, or to why it stopped: the upstream failed, or the request was aborted (the client left,
 * the deadline).
 */
async function pipeBody(
  upstream: UpstreamResponse,
  res: ServerResponse,
  signal: AbortSignal,
  provider: string,
  onChunk: (chunk: Buffer) => void,
): Promise<GatewayError | null> {
  try {
    for await (const chunk of upstream.body) {
      onChunk(chunk);
      if (res.destroyed) continue;
      if (!res.write(chunk)) await drained(res, signal);
    }
    return signal.aborted ? toGatewayError(signal.reason) : null;
  } catch (err) {
    return upstreamFailure(provider, err, signal);
  } finally {
    upstream.body.destroy();
  }
}

/** The client's socket took what was written, or went away, or the request was aborted. */
function drained(res: ServerResponse, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
    signal.addEventListener('abort', done, { once: true });
  });
}

async function readWhole(res: UpstreamResponse, provider: string, signal: AbortSignal): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res.body) {
      size += chunk.length;
      if (size > MAX_WHOLE_ANSWER) throw errors.malformed(provider, `the answer is larger than ${MAX_WHOLE_ANSWER} bytes`);
      parts.push(chunk);
    }
  } catch (err) {
    throw upstreamFailure(provider, err, signal);
  } finally {
    res.body.destroy();
  }
  return Buffer.concat(parts);
}

function eventOf(frame: SseFrame): Record<string, unknown> | undefined {
  if (frame.data === '[DONE]') return undefined;
  try {
    return asObject(JSON.parse(frame.data));
  } catch {
    return undefined;
  }
}

/** An `error` event an upstream sent inside its 200 stream: the request's failure, kept as the upstream said it. */
function streamError(provider: string, event: Record<string, unknown>): GatewayError {
  const inner = asObject(event.error) ?? event;
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return upstreamHttpError({
    provider,
    status: 502,
    httpStatus: 200,
    message: text(inner.message),
    upstreamType: text(inner.type),
    upstreamCode: text(inner.code),
    param: text(inner.param),
  });
}

/** The stream's usages (one per image of an `n: 2` stream) added up; undefined when there was none. */
function sumUsage(usages: Usage[]): Usage | undefined {
  if (usages.length <= 1) return usages[0];
  const sum = (pick: (u: Usage) => number | undefined) => usages.reduce((total, u) => total + (pick(u) ?? 0), 0);
  const images = sum((u) => u.units?.images);
  return {
    inputTokens: sum((u) => u.inputTokens),
    outputTokens: sum((u) => u.outputTokens),
    imageInputTokens: sum((u) => u.imageInputTokens),
    ...(images > 0 ? { units: { images } } : {}),
    source: usages.every((u) => u.source === 'provider') ? 'provider' : 'estimated',
  };
}

/** `{"error":{...}}` as OpenAI's stream error event: `{"type":"error","error":{...}}`. */
function withType(body: string): string {
  return `{"type":"error",${body.slice(1)}`;
}

function writeLast(res: ServerResponse, text: string): void {
  if (res.destroyed || res.writableEnded) return;
  res.end(text);
}
