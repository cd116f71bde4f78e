import { Worker } from 'node:worker_threads';
import type { CountRequest, CountResponse, Encoding } from './token-counter-worker.ts';

export type { Encoding } from './token-counter-worker.ts';

/** One text being counted (a TokenTally): its pieces wait here until the worker takes them. */
export interface CountSource {
  readonly encoding: Encoding;
  /** Characters waiting to be counted. */
  readonly queuedChars: number;
  /** The next pieces to count: at least one, at most `maxChars` in all unless one is longer. */
  take(maxChars: number): string[];
  /**
   * The counts of the first pieces (the rest go back in line: the worker's time slice ended) and
   * the worker time they took; null when they could not be counted.
   */
  counted(pieces: string[], counts: number[] | null, ms: number): void;
}

export interface CountQueue {
  /** The worker is loaded, with `encoding` (rejects when it cannot be). */
  ready(encoding: Encoding): Promise<void>;
  /** `source` has pieces: put it in line, or move it to the urgent line (someone waits on it). */
  submit(source: CountSource, urgent: boolean): void;
  /** `source` needs nothing more: out of both lines. */
  withdraw(source: CountSource): void;
  /** Whether `chars` more may wait in line (past the cap, texts are estimated instead). */
  hasRoom(chars: number): boolean;
}

/**
 * At most this many characters go to the worker in one message (~2-5 ms of prose); the worker
 * stops after its time slice anyway (token-counter-worker.ts), so a batch of the worst text
 * (random letters or CJK, ~3-9 us/char) does not hold the line longer.
 */
export const BATCH_CHARS = 16 * 1024;

/**
 * The most text waiting in line, all requests together (~0.4-1 s of prose):
 * beyond it, new text is estimated rather than queued, so a burst of huge outputs cannot make the
 * line (and its memory) grow without bound.
 */
export const MAX_QUEUED_CHARS = 4 * 1024 * 1024;

/**
 * The encodings live in a worker thread. In the main thread they cost twice: loading evaluates a
 * large module synchronously (~150 ms, stalling every open stream), and their ~70 MiB of arrays
 * sit in the heap every major GC marks (~40 us per streamed request in `npm run bench`). Counting
 * is needed only when an upstream reports no usage, so a message round trip is cheap by comparison.
 * For the same reason the worker starts on the first count, not with the gateway: it costs ~70 MiB
 * of RSS (a V8 isolate and o200k), most of an idle gateway's memory when it never counts.
 *
 * One worker, shared fairly: one batch in flight at a time, taken in turn from each text in line
 * (round robin), texts someone waits on (a stream's end) before texts counted ahead in the
 * background. No request waits behind another's whole count, only behind one time slice of it
 * (~5 ms, plus one piece). Measured on this 2-core machine (load average ~13) while a 1 MiB
 * random-letter prompt was counted: a small stream's count waited 170-290 ms when a message was a
 * fixed 4 KiB, 10-100 ms with the time slice, and minutes with the old single whole count. A pool
 * would cost ~90 MiB per worker for no gain on small machines; fairness is what was missing.
 */
export class CountScheduler implements CountQueue {
  private worker: Worker | undefined;
  private loading: Promise<void> | undefined;
  private loadFailure: Error | undefined;
  /** cl100k loads in the worker on first use (token-counter-worker.ts); resolved once it has. */
  private cl100k: Promise<unknown> | undefined;
  private readonly urgent = new Set<CountSource>();
  private readonly background = new Set<CountSource>();
  /** The source whose batch is at the worker: out of the lines until its batch is counted. */
  private current: { source: CountSource; urgent: boolean; withdrawn: boolean } | undefined;
  private nextId = 1;
  /** Messages at the worker: the batch, and the one-time load of cl100k. */
  private readonly pending = new Map<number, (res: CountResponse | null) => void>();

  /**
   * The worker is loaded, with `encoding` (rejects when it cannot be). A one-time load is not a
   * count taking long: a tally's wait starts after it (token-tally.ts).
   */
  async ready(encoding: Encoding = 'o200k'): Promise<void> {
    if (this.loadFailure !== undefined) throw this.loadFailure;
    await (this.loading ??= this.load());
    // Counting no text loads the encoding; its answer says it is there.
    if (encoding === 'cl100k') await (this.cl100k ??= this.send('cl100k', []));
  }

  submit(source: CountSource, urgent: boolean): void {
    if (this.current?.source === source) {
      this.current.urgent ||= urgent;
      return;
    }
    if (urgent) {
      this.background.delete(source);
      this.urgent.add(source);
    } else if (!this.urgent.has(source)) this.background.add(source);
    this.pump();
  }

  withdraw(source: CountSource): void {
    this.urgent.delete(source);
    this.background.delete(source);
    if (this.current?.source === source) this.current.withdrawn = true;
  }

  hasRoom(chars: number): boolean {
    let queued = chars;
    for (const s of this.urgent) queued += s.queuedChars;
    for (const s of this.background) queued += s.queuedChars;
    return queued <= MAX_QUEUED_CHARS;
  }

  private pump(): void {
    if (this.current) return;
    const line = this.urgent.size > 0 ? this.urgent : this.background;
    const source = line.values().next().value;
    if (!source) return;
    line.delete(source);
    const pieces = source.take(BATCH_CHARS);
    if (pieces.length === 0) return this.pump();
    const current = { source, urgent: line === this.urgent, withdrawn: false };
    this.current = current;
    void this.count(source.encoding, pieces).then((res) => {
      this.current = undefined;
      source.counted(pieces, res?.counts ?? null, res?.ms ?? 0);
      // Round robin: back in line behind every text that came while its batch was counted.
      if (!current.withdrawn && source.queuedChars > 0) (current.urgent ? this.urgent : this.background).add(source);
      this.pump();
    });
  }

  /** Resolves to null when the worker cannot count (never loaded, or died with the batch). */
  private async count(encoding: Encoding, texts: string[]): Promise<CountResponse | null> {
    try {
      await this.ready();
    } catch {
      return null;
    }
    return this.send(encoding, texts);
  }

  private send(encoding: Encoding, texts: string[]): Promise<CountResponse | null> {
    const worker = this.worker;
    if (!worker) return Promise.resolve(null);
    const id = this.nextId++;
    worker.ref();
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      worker.postMessage({ id, encoding, texts } satisfies CountRequest);
    });
  }

  private load(): Promise<void> {
    // The worker file sits beside this one: .ts when run from src with type stripping, .js in the
    // built package (dist/), where the compiler rewrites import specifiers but not this URL.
    const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
    const worker = new Worker(new URL(`./token-counter-worker${extension}`, import.meta.url));
    this.worker = worker;
    return new Promise((resolve, reject) => {
      let loaded = false;
      worker.on('message', (res: CountResponse) => {
        if (res.id === 0) {
          loaded = true;
          // Loaded: from now on the worker never keeps the process alive by itself (a message in
          // flight references it again, see send()).
          if (this.pending.size === 0) worker.unref();
          return resolve();
        }
        const done = this.pending.get(res.id);
        this.pending.delete(res.id);
        if (this.pending.size === 0) worker.unref();
        done?.(res);
      });
      worker.once('error', (err: Error) => {
        if (!loaded) {
          // Never loaded: every text is estimated from now on (see estimate-tokens.ts).
          this.loadFailure = err;
          console.error('sluice: the token counter did not load; usage without an upstream report is estimated', err);
          reject(err);
        } else console.error('sluice: the token counter failed; starting a new one', err);
      });
      worker.once('exit', (code) => {
        if (!loaded) {
          this.loadFailure ??= new Error(`the token counter exited with code ${code} while loading`);
          reject(this.loadFailure);
        }
        // What was at the worker is estimated; the next count starts a fresh worker.
        if (this.worker === worker) {
          this.worker = undefined;
          this.cl100k = undefined;
          if (loaded) this.loading = undefined;
        }
        for (const lost of this.pending.values()) lost(null);
        this.pending.clear();
      });
    });
  }
}

/** The gateway's one counter. */
export const countScheduler = new CountScheduler();
