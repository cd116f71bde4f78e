import { parentPort } from 'node:worker_threads';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';

/** A worker holding the BPE encodings: see count-tokens.ts for why they live off the main thread. */
export interface CountRequest {
  id: number;
  encoding: 'o200k' | 'cl100k';
  texts: string[];
}

export interface CountResponse {
  id: number;
  counts: number[];
}

const port = parentPort;
if (!port) throw new Error('token-counter-worker.ts runs as a worker thread');

/**
 * cl100k (gpt-4, gpt-3.5 only) loads on first use: it adds ~42 MiB and ~80 ms, paid here in the
 * worker, so a gateway that never sees those models never holds it. o200k (every newer model and
 * the estimate for everyone else) is loaded up front.
 */
let cl100k: Promise<(text: string) => number> | undefined;
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

port.on('message', (req: CountRequest) => {
  // loadCl100k never rejects, so nothing here can be left unhandled.
  void (req.encoding === 'cl100k' ? loadCl100k() : Promise.resolve(o200k)).then((count) =>
    port.postMessage({ id: req.id, counts: req.texts.map((t) => (t ? count(t) : 0)) } satisfies CountResponse),
  );
});
// Loaded: the main thread may now count without waiting on the encodings' one-time setup.
port.postMessage({ id: 0, counts: [] } satisfies CountResponse);
