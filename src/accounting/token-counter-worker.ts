import { parentPort } from 'node:worker_threads';
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
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
port.on('message', (req: CountRequest) => {
  const count = req.encoding === 'cl100k' ? cl100k : o200k;
  port.postMessage({ id: req.id, counts: req.texts.map((t) => (t ? count(t) : 0)) } satisfies CountResponse);
});
// Loaded: the main thread may now count without waiting on the encodings' one-time setup.
port.postMessage({ id: 0, counts: [] } satisfies CountResponse);
