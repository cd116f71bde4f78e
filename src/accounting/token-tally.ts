import { type CountQueue, type CountSource, countScheduler, type Encoding } from './count-scheduler.ts';
import { estimateTokens, utf8Bytes } from './estimate-tokens.ts';
import { pieceEnd } from './split-for-count.ts';

export interface TallyLimits {
  /** Characters counted with the BPE; the rest of the text is estimated. */
  maxCountedChars: number;
  /** Worker time spent on this text; past it, the rest is estimated. */
  maxWorkerMs: number;
  /** The longest wait for the counts once someone asks for the total; then what is left is estimated. */
  waitMs: number;
}

/**
 * The budget of one text (a request's output, or its prompt). Prose counts at ~0.1-0.3 us/char in
 * the worker, so 1 MiB is ~0.1-0.3 s; adversarial text (random letters, random CJK) takes
 * ~3-9 us/char even cut into short runs, which the worker-time budget stops at ~1 s. The wait is
 * what a client waits at most for its usage once the upstream is done.
 */
export const DEFAULT_LIMITS: TallyLimits = { maxCountedChars: 1024 * 1024, maxWorkerMs: 1000, waitMs: 1000 };

/**
 * Pieces go to the worker at most this long, cut at a safe point (split-for-count.ts), so a
 * piece's count never depends on the text around it. Short, because the worker's time slice ends
 * between pieces: 1 KiB is at most ~3-9 ms of the worst text.
 */
export const PIECE_CHARS = 1024;

/**
 * The pending text's parts are joined every this many: often enough that a stream's output does
 * not sit in memory as a tree of deltas, rarely enough that joining costs little (the copies add
 * up to ~50x the text at the 32 KiB before counting ahead starts: ~1.6 MB of memcpy at most).
 */
const JOIN_PARTS = 64;

/**
 * Output is only counted ahead in the background past this much text: most upstreams report
 * usage, and counting every stream would be wasted work. Below it, the count at the end is
 * ~3-10 ms of prose (~0.15 s of the worst text, within the wait).
 */
export const BACKGROUND_AFTER_CHARS = 32 * 1024;

/**
 * The token count of one text that arrives in parts (a stream's deltas, a prompt's messages):
 * counted in bounded pieces as it arrives, by a worker shared fairly with every other request, and
 * estimated (estimate-tokens.ts) past its budget or when the wait for the worker runs out. The
 * total is exact when nothing was estimated and no run of text had to be cut (MAX_RUN).
 */
export class TokenTally implements CountSource {
  readonly encoding: Encoding;
  private readonly queue: CountQueue;
  private readonly limits: TallyLimits;
  /**
   * Text not cut into pieces yet (the run at its end may go on in the next part), as parts joined
   * into one string every JOIN_PARTS: a string grown by `+=` is a tree holding every delta, ~30
   * bytes a token over the text itself (measured: 62 KiB for a 2,000-token output of short
   * deltas, against 10 KiB joined), and every open stream holds its output here until it ends.
   */
  private pending: string[] = [];
  private pendingLength = 0;
  private readonly pieces: string[] = [];
  private piecesLength = 0;
  /** The batch at the worker. */
  private atWorker: string[] | undefined;
  private countedTokens = 0;
  /** The UTF-8 size of the counted text: its rate of tokens per byte estimates the rest. */
  private countedBytes = 0;
  /** The UTF-8 size of the text that is estimated rather than counted. */
  private uncountedBytes = 0;
  private admittedChars = 0;
  private workerMs = 0;
  /** Over budget: everything from now on is estimated. */
  private exhausted = false;
  private urgent = false;
  /** Counting ahead has started (pieces are cut as soon as one is full). */
  private counting = false;
  private result: Promise<number> | undefined;
  private closed = false;
  private onCounted: (() => void) | undefined;

  constructor(encoding: Encoding, limits: TallyLimits = DEFAULT_LIMITS, queue: CountQueue = countScheduler) {
    this.encoding = encoding;
    this.limits = limits;
    this.queue = queue;
  }

  get queuedChars(): number {
    return this.piecesLength;
  }

  /** More of the text, before total() is asked (cheap: this runs for every delta of every stream). */
  add(text: string): void {
    if (this.closed || this.result || !text) return;
    if (this.exhausted) {
      this.uncountedBytes += utf8Bytes(text);
      return;
    }
    this.pending.push(text);
    this.pendingLength += text.length;
    if (this.pending.length >= JOIN_PARTS) this.pending = [this.pending.join('')];
    if (this.pendingLength > (this.counting ? PIECE_CHARS : BACKGROUND_AFTER_CHARS)) this.cut(false);
  }

  /** The text so far is a whole of its own (a prompt's messages are counted apart). */
  endPart(): void {
    if (!this.closed && !this.result) this.cut(true);
  }

  /**
   * The count of all the text added: waits for the worker at most `limits.waitMs` (not counting
   * its one-time load) and never past `signal`, then estimates what is left. Settled once: later
   * calls get the same number.
   */
  total(signal?: AbortSignal): Promise<number> {
    this.result ??= this.settle(signal);
    return this.result;
  }

  /**
   * Nothing more will be counted (the count is settled, or not needed): the text still in line or
   * at the worker is estimated, and leaves the line.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.withdraw(this);
    for (const piece of [...this.pieces, ...(this.atWorker ?? [])]) this.uncountedBytes += utf8Bytes(piece);
    this.uncountedBytes += utf8Bytes(this.pending.join(''));
    this.pieces.length = 0;
    this.piecesLength = 0;
    this.pending = [];
    this.pendingLength = 0;
    this.atWorker = undefined;
    this.result ??= Promise.resolve(this.sum());
    this.onCounted?.();
  }

  /**
   * The tokens so far, waiting for nothing: what was counted, and the text not counted yet
   * estimated at the counted part's rate. Read now and then (the durable journal's progress, at
   * most once a second), so its cost (a UTF-8 length of the text in line, at most ~33 KiB) stays
   * off the per-delta path.
   */
  soFar(): number {
    if (this.closed) return this.sum();
    let bytes = this.uncountedBytes;
    for (const text of this.pending) bytes += utf8Bytes(text);
    for (const piece of this.pieces) bytes += utf8Bytes(piece);
    for (const piece of this.atWorker ?? []) bytes += utf8Bytes(piece);
    return this.countedTokens + estimateTokens(bytes, { tokens: this.countedTokens, bytes: this.countedBytes });
  }

  /** The counted tokens, and the estimate of the rest at the counted part's rate. */
  private sum(): number {
    return this.countedTokens + estimateTokens(this.uncountedBytes, { tokens: this.countedTokens, bytes: this.countedBytes });
  }

  take(maxChars: number): string[] {
    const batch: string[] = [];
    let length = 0;
    while (this.pieces.length > 0 && (batch.length === 0 || length + this.pieces[0].length <= maxChars)) {
      const piece = this.pieces.shift() as string;
      batch.push(piece);
      length += piece.length;
    }
    this.piecesLength -= length;
    this.atWorker = batch.length > 0 ? batch : undefined;
    return batch;
  }

  counted(pieces: string[], counts: number[] | null, ms: number): void {
    if (this.closed || this.atWorker !== pieces) return;
    this.atWorker = undefined;
    this.workerMs += ms;
    const done = counts ? counts.length : pieces.length;
    for (let i = 0; i < done; i++) {
      const n = counts?.[i] ?? -1;
      const bytes = utf8Bytes(pieces[i]);
      if (n >= 0) {
        this.countedTokens += n;
        this.countedBytes += bytes;
      } else this.uncountedBytes += bytes;
    }
    // Past the worker's time slice: first in line again.
    const rest = pieces.slice(done);
    this.pieces.unshift(...rest);
    for (const piece of rest) this.piecesLength += piece.length;
    if (this.workerMs >= this.limits.maxWorkerMs) this.exhaust();
    this.onCounted?.();
  }

  /** Cuts the pending text into pieces: all of it, or (while it may go on) whole pieces only. */
  private cut(all: boolean): void {
    const text = this.pending.join('');
    let from = 0;
    while (all ? from < text.length : text.length - from > PIECE_CHARS) {
      if (this.exhausted) {
        this.uncountedBytes += utf8Bytes(text.slice(from));
        from = text.length;
        break;
      }
      const end = pieceEnd(text, from, PIECE_CHARS);
      this.enqueue(text.slice(from, end));
      from = end;
    }
    const rest = text.slice(from);
    this.pending = rest ? [rest] : [];
    this.pendingLength = rest.length;
    this.counting = true;
  }

  private enqueue(piece: string): void {
    // The line's cap holds back counting ahead, never the text someone waits on (a bounded tail).
    const room = this.urgent || this.queue.hasRoom(piece.length);
    if (this.admittedChars + piece.length > this.limits.maxCountedChars || !room) {
      // The pieces already in line are within the budget: they are still counted.
      this.exhausted = true;
      this.uncountedBytes += utf8Bytes(piece);
      return;
    }
    this.admittedChars += piece.length;
    this.pieces.push(piece);
    this.piecesLength += piece.length;
    this.queue.submit(this, this.urgent);
  }

  /** Over the worker-time budget: the pieces in line are estimated, and so is all text from now on. */
  private exhaust(): void {
    this.exhausted = true;
    this.queue.withdraw(this);
    for (const piece of this.pieces) this.uncountedBytes += utf8Bytes(piece);
    this.pieces.length = 0;
    this.piecesLength = 0;
  }

  private get idle(): boolean {
    return this.closed || (this.pieces.length === 0 && this.atWorker === undefined);
  }

  private async settle(signal?: AbortSignal): Promise<number> {
    if (!signal?.aborted) {
      this.urgent = true;
      this.cut(true);
      if (this.pieces.length > 0) this.queue.submit(this, true);
      if (!this.idle) await this.waitForCounts(signal);
    }
    // What the worker did not count in time is estimated (close); a batch still there is dropped.
    this.close();
    return this.sum();
  }

  private waitForCounts(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.onCounted = undefined;
        resolve();
      };
      signal?.addEventListener('abort', done, { once: true });
      this.onCounted = () => {
        if (this.idle) done();
      };
      // The wait starts once the worker is loaded, with this text's encoding: a one-time load
      // (~0.3 s on the gateway's first count; cl100k on first use, ~80 ms) is not a count taking long.
      this.queue.ready(this.encoding).then(() => {
        if (this.onCounted) timer = setTimeout(done, this.limits.waitMs);
      }, done);
    });
  }
}
