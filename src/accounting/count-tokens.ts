import { Worker } from 'node:worker_threads';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import type { CountRequest, CountResponse } from './token-counter-worker.ts';

/**
 * Local token counts with a real BPE (gpt-tokenizer: the same ids as tiktoken, ~10x faster).
 * Exact for OpenAI models, an estimate for everyone else; records say `estimated` either way.
 *
 * The encodings live in a worker thread. In the main thread they cost twice: loading evaluates a
 * large module synchronously (~150 ms, stalling every open stream), and their ~70 MiB of arrays
 * sit in the heap every major GC marks (~40 us per streamed request in `npm run bench`). Counting
 * is needed only when an upstream reports no usage, so a message round trip is cheap by comparison.
 */
class TokenCounter {
  private worker: Worker | undefined;
  private ready: Promise<void> | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, (counts: number[]) => void>();

  start(): Promise<void> {
    if (this.ready) return this.ready;
    // The worker file sits beside this one: .ts when run from src with type stripping, .js in the
    // built package (dist/), where the compiler rewrites import specifiers but not this URL.
    const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
    const worker = new Worker(new URL(`./token-counter-worker${extension}`, import.meta.url));
    this.worker = worker;
    this.ready = new Promise((resolve, reject) => {
      worker.once('error', reject);
      worker.on('message', (res: CountResponse) => {
        if (res.id === 0) {
          // Loaded: from now on the worker never keeps the process alive by itself (a count in
          // flight references it again, see count()).
          if (this.pending.size === 0) worker.unref();
          return resolve();
        }
        const done = this.pending.get(res.id);
        this.pending.delete(res.id);
        if (this.pending.size === 0) worker.unref();
        done?.(res.counts);
      });
    });
    return this.ready;
  }

  async count(encoding: CountRequest['encoding'], texts: string[]): Promise<number[]> {
    await this.start();
    const worker = this.worker as Worker;
    const id = this.nextId++;
    worker.ref();
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      worker.postMessage({ id, encoding, texts } satisfies CountRequest);
    });
  }
}

const counter = new TokenCounter();

/** Starts the worker and waits until its encodings are loaded (the gateway does this at startup). */
export function loadTokenCounters(): Promise<void> {
  return counter.start();
}

/** gpt-4 / gpt-3.5 (not gpt-4o, gpt-4.1) use cl100k; everything newer, and non-OpenAI models, o200k. */
function encodingFor(model: string): CountRequest['encoding'] {
  // Azure names its deployments gpt-35-turbo; routers prefix the vendor (openai/gpt-4).
  return /^(gpt-4(?![o.])|gpt-3\.?5)/.test(model.slice(model.lastIndexOf('/') + 1)) ? 'cl100k' : 'o200k';
}

/** Per-message framing overhead of the chat format (OpenAI's published counting recipe). */
const TOKENS_PER_MESSAGE = 3;
const REPLY_PRIMING = 3;

export function promptText(request: CanonicalRequest): string[] {
  const parts: string[] = [];
  for (const m of request.messages) {
    const c = m.content;
    if (typeof c === 'string') parts.push(c);
    else if (Array.isArray(c)) for (const p of c) if ('text' in p && typeof p.text === 'string') parts.push(p.text);
    if (m.role === 'assistant' && m.tool_calls) for (const t of m.tool_calls) parts.push(t.function.name, t.function.arguments);
  }
  if (request.tools) parts.push(JSON.stringify(request.tools));
  return parts;
}

export async function countPromptTokens(request: CanonicalRequest, model: string): Promise<number> {
  const counts = await counter.count(encodingFor(model), promptText(request));
  let n = REPLY_PRIMING + request.messages.length * TOKENS_PER_MESSAGE;
  for (const c of counts) n += c;
  return n;
}

export async function countTextTokens(text: string, model: string): Promise<number> {
  if (!text) return 0;
  const [n] = await counter.count(encodingFor(model), [text]);
  return n;
}
