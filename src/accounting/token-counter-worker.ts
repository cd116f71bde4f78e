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
const loadCl100k = () => (cl100k ??= import('gpt-tokenizer/encoding/cl100k_base').then((m) => m.countTokens));

port.on('message', async (req: CountRequest) => {
  const count = req.encoding === 'cl100k' ? await loadCl100k() : o200k;
  port.postMessage({ id: req.id, counts: req.texts.map((t) => (t ? count(t) : 0)) } satisfies CountResponse);
});
// Loaded: the main thread may now count without waiting on the encodings' one-time setup.
port.postMessage({ id: 0, counts: [] } satisfies CountResponse);
