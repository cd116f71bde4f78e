import { parentPort } from 'node:worker_threads';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { splitLongRuns } from './split-for-count.ts';

/** A worker holding the BPE encodings: see count-scheduler.ts for why they live off the main thread. */
export type Encoding = 'o200k' | 'cl100k';

export interface CountRequest {
  id: number;
  encoding: Encoding;
  texts: string[];
}

export interface CountResponse {
  id: number;
  /**
   * The counts of the first texts, in order: the texts past the time slice are not counted (the
   * caller sends them again); -1 for a text that could not be counted (the caller estimates it).
   */
  counts: number[];
  /** Time spent counting, for the per-request budget (token-tally.ts). */
  ms: number;
}

type CountTokens = typeof o200k;

const port = parentPort;
if (!port) throw new Error('token-counter-worker.ts runs as a worker thread');

/**
 * cl100k (gpt-4, gpt-3.5 only) loads on first use: it adds ~42 MiB and ~80 ms, paid here in the
 * worker, so a gateway that never sees those models never holds it. o200k (every newer model and
 * the estimate for everyone else) is loaded up front.
 */
let cl100k: Promise<CountTokens> | undefined;
const loadCl100k = () =>
  (cl100k ??= import('gpt-tokenizer/encoding/cl100k_base').then(
    (m) => m.countTokens,
    // A failed load must not kill the worker: every count in flight would then wait forever. o200k is
    // the estimate everyone else gets (local counts are recorded as `estimated` either way).
    (err: unknown) => {
      console.error('sluice: the cl100k encoding did not load; counting gpt-4 / gpt-3.5 with o200k', err);
      return o200k;
    },
  ));

/**
 * Text that looks like a special token (`<|endoftext|>` in a prompt) is counted as the text it is,
 * as OpenAI does for message content; gpt-tokenizer's default throws on it.
 */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/** Long runs without a pre-tokenizer boundary are cut first: see split-for-count.ts. */
function countText(count: CountTokens, text: string): number {
  let n = 0;
  for (const segment of splitLongRuns(text)) n += count(segment, AS_TEXT);
  return n;
}

function countOrFlag(count: CountTokens, text: string): number {
  try {
    return countText(count, text);
  } catch (err) {
    console.error('sluice: a text could not be counted; it is estimated', err);
    return -1;
  }
}

/**
 * One message counts for about this long (plus one text): the scheduler waits for the message in
 * flight before any other request's count, so this bounds how long a small count waits behind a
 * big one. A text is a piece of at most 1 KiB (token-tally.ts): ~0.1-0.3 ms of prose, ~3-9 ms of
 * the worst text measured (random letters or CJK), against ~0.05 ms for a message round trip.
 */
const SLICE_MS = 5;

port.on('message', (req: CountRequest) => {
  // loadCl100k never rejects, so nothing here can be left unhandled; countOrFlag never throws.
  void (req.encoding === 'cl100k' ? loadCl100k() : Promise.resolve(o200k)).then((count) => {
    const started = performance.now();
    const counts: number[] = [];
    for (const text of req.texts) {
      if (counts.length > 0 && performance.now() - started >= SLICE_MS) break;
      counts.push(text ? countOrFlag(count, text) : 0);
    }
    port.postMessage({ id: req.id, counts, ms: performance.now() - started } satisfies CountResponse);
  });
});
// Loaded: the main thread may now count without waiting on the encodings' one-time setup.
port.postMessage({ id: 0, counts: [], ms: 0 } satisfies CountResponse);
