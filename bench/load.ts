import type { Dispatcher } from 'undici';
import { type ClientProtocol, SseProbe } from './sse-probe.ts';
import { EXPECTED_TEXT, TOKENS, UNARY_TEXT } from './upstream-frames.ts';

/** One way of asking for the same 20-chunk stream: straight to the fake upstream, or through sluice. */
export interface Target {
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  protocol: ClientProtocol;
  /** A non-streaming request (the unary mode): the answer is one JSON completion, not a stream. */
  unary?: boolean;
  /** A response header every answer must carry (a governed request's limit headers: proof it was admitted with its limits). */
  expectHeader?: string;
}

/** Milliseconds from sending the request. */
export interface RequestTiming {
  /** Response headers received. */
  ttfb: number;
  /** First frame with non-empty text. */
  ttft: number;
  /** Body fully read. */
  total: number;
  /** Body pieces the client read (how much the path coalesced the 20 chunks). */
  reads: number;
}

export interface PhaseResult {
  timings: RequestTiming[];
  errors: number;
  /** The first few error messages. */
  errorSamples: string[];
  wallMs: number;
}

export interface PhaseOptions {
  dispatcher: Dispatcher;
  concurrency: number;
  /** No request starts after this; the ones in flight finish and count. */
  durationMs: number;
  /** Spreads the workers' first requests over this long (paced mode: one pace interval). */
  staggerMs: number;
  /** Every Nth response is parsed whole and checked against the scripted text. */
  validateEvery: number;
}

/** A phase gives up early once this many requests failed: the numbers would mean nothing. */
const MAX_ERRORS = 50;

/** Closed-loop load: `concurrency` workers, each sending its next request when the last ended. */
export async function runPhase(target: Target, options: PhaseOptions): Promise<PhaseResult> {
  const result: PhaseResult = { timings: [], errors: 0, errorSamples: [], wallMs: 0 };
  const started = performance.now();
  const stopAt = started + options.durationMs;
  let sent = 0;
  const worker = async (index: number) => {
    const delay = (index * options.staggerMs) / options.concurrency;
    if (delay >= 1) await new Promise((r) => setTimeout(r, delay));
    while (performance.now() < stopAt && result.errors < MAX_ERRORS) {
      const validate = sent++ % options.validateEvery === 0;
      try {
        const once = target.unary ? unaryOnce : streamOnce;
        result.timings.push(await once(target, options.dispatcher, validate));
      } catch (err) {
        result.errors++;
        if (result.errorSamples.length < 5) result.errorSamples.push((err as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, (_, i) => worker(i)));
  result.wallMs = performance.now() - started;
  return result;
}

export async function streamOnce(target: Target, dispatcher: Dispatcher, validate: boolean): Promise<RequestTiming> {
  const t0 = performance.now();
  const res = await dispatcher.request({
    origin: target.origin,
    path: target.path,
    method: 'POST',
    headers: target.headers,
    body: target.body,
  });
  const ttfb = performance.now() - t0;
  if (res.statusCode !== 200) {
    const text = await res.body.text();
    throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 300)}`);
  }
  if (target.expectHeader && res.headers[target.expectHeader] === undefined) {
    await res.body.dump();
    throw new Error(`no ${target.expectHeader} header`);
  }
  const probe = new SseProbe(target.protocol, validate);
  let ttft = Number.NaN;
  let reads = 0;
  res.body.setEncoding('utf8');
  await new Promise<void>((resolve, reject) => {
    res.body.on('data', (piece: string) => {
      reads++;
      if (probe.push(piece)) ttft = performance.now() - t0;
    });
    res.body.once('end', resolve);
    res.body.once('error', reject);
  });
  const total = performance.now() - t0;
  if (!probe.complete) throw new Error('the stream ended without its terminator');
  if (Number.isNaN(ttft)) throw new Error('the stream carried no text');
  if (validate) {
    if (probe.text !== EXPECTED_TEXT || probe.contentFrames !== TOKENS.length || !probe.usage) {
      throw new Error(
        `unexpected stream: ${probe.contentFrames} content frames, usage ${probe.usage}, text ${JSON.stringify(probe.text)}`,
      );
    }
  }
  return { ttfb, ttft, total, reads };
}

/** A non-streaming request: no first token apart from the whole answer, so TTFT is the total. */
export async function unaryOnce(target: Target, dispatcher: Dispatcher, validate: boolean): Promise<RequestTiming> {
  const t0 = performance.now();
  const res = await dispatcher.request({
    origin: target.origin,
    path: target.path,
    method: 'POST',
    headers: target.headers,
    body: target.body,
  });
  const ttfb = performance.now() - t0;
  const text = await res.body.text();
  const total = performance.now() - t0;
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 300)}`);
  if (validate) {
    const body = JSON.parse(text) as { choices?: { message?: { content?: unknown } }[]; usage?: unknown };
    if (body.choices?.[0]?.message?.content !== UNARY_TEXT || !body.usage) {
      throw new Error(`unexpected completion: ${text.slice(0, 300)}`);
    }
  }
  return { ttfb, ttft: total, total, reads: 1 };
}
