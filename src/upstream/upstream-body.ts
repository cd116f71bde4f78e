import type { Dispatcher } from 'undici';

/** Chunks held before the upstream read is paused (backpressure reaches the upstream socket). */
const HIGH_WATER = 16;

/**
 * An upstream response body fed straight by undici's dispatch handler. It replaces the Readable
 * that undici's request() wraps bodies in: its machinery (buffer list, nextTick, async iterator)
 * cost ~15 us per streamed response in `npm run bench`, for nothing a byte pipe needs. Iterate it
 * once with `for await`; leaving the loop early (or `destroy()`) aborts the upstream request.
 */
export class UpstreamBody implements AsyncIterable<Buffer> {
  private chunks: Buffer[] = [];
  private ended = false;
  private failure: Error | undefined;
  /** The waiting consumer: what it makes of the next chunk (or the end), and where a failure goes. */
  private waiter: { take: (chunk: Buffer | null) => void; reject: (err: Error) => void } | undefined;
  private destroyedFlag = false;
  private wakeQueued = false;
  private readonly controller: Dispatcher.DispatchController;

  constructor(controller: Dispatcher.DispatchController) {
    this.controller = controller;
  }

  get destroyed(): boolean {
    return this.destroyedFlag || this.ended || this.failure !== undefined;
  }

  /**
   * Stops the response (closing the upstream connection) unless it already ended. Every stream
   * calls it on its way out, almost always after the end: the reason's Error (a stack trace) is
   * built only when there is something to abort (`npm run bench` profile: a default-argument Error
   * built on every call was 35 us of a 1.2 ms streamed request).
   */
  destroy(reason?: Error): void {
    if (this.destroyed) return;
    this.destroyedFlag = true;
    this.controller.abort(reason ?? new Error('upstream body released early'));
  }

  // Fed by the dispatch handler.
  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    // undici hands over each HTTP chunk of a socket read separately, synchronously: wake the
    // consumer once, after the whole read is parsed, so those chunks leave in one client write.
    if (this.waiter && !this.wakeQueued) {
      this.wakeQueued = true;
      queueMicrotask(this.wake);
    }
    if (this.chunks.length >= HIGH_WATER && !this.controller.paused) this.controller.pause();
  }

  private readonly wake = (): void => {
    this.wakeQueued = false;
    const w = this.waiter;
    if (!w || this.chunks.length === 0) return;
    this.waiter = undefined;
    w.take(this.read() as Buffer);
  };

  end(): void {
    this.ended = true;
    // Chunks of this same read are still to be handed over (the queued wake does it, then null).
    if (this.chunks.length > 0) return;
    const w = this.waiter;
    this.waiter = undefined;
    w?.take(null);
  }

  fail(err: Error): void {
    if (this.ended) return;
    this.failure = err;
    // A failure (or an abort) wins at once over what is buffered, as a destroyed stream's would.
    this.chunks = [];
    const w = this.waiter;
    this.waiter = undefined;
    w?.reject(err);
  }

  /**
   * Everything buffered as one chunk, null at the end; a value at once when something is
   * buffered. Reads that arrived while the consumer was busy are merged, so the client gets them
   * in one write: one syscall instead of several (`npm run bench`: client writes per response
   * 13.5 -> 7, where writev is the largest single cost).
   */
  private read(): Buffer | null | undefined {
    if (this.chunks.length > 0) {
      const chunk = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
      this.chunks = [];
      if (this.controller.paused) this.controller.resume();
      return chunk;
    }
    if (this.ended || this.destroyedFlag) return null;
    return undefined;
  }

  /**
   * `map` of the next chunk (null at the end): at once when one is buffered, else in one promise
   * that the chunk's arrival settles with `map`'s result. `map` runs where the chunk is handed
   * over rather than in a `.then` of a promise of the chunk: one promise and one turn of the
   * microtask queue fewer per upstream read (a 22-read stream in a loop, a consumer waiting on
   * each read: the body's own 0.30-0.31 -> 0.20-0.22 µs a read, best of 7 rounds, twice).
   */
  private take<R>(map: (chunk: Buffer | null) => R): R | Promise<R> {
    if (this.failure && this.chunks.length === 0) return Promise.reject(this.failure);
    const chunk = this.read();
    if (chunk !== undefined) return map(chunk);
    return new Promise((resolve, reject) => {
      this.waiter = {
        take: (arrived) => {
          try {
            resolve(map(arrived));
          } catch (err) {
            // What `map` threw, unchanged, as the `.then(map)` this replaces rejected with.
            // oxlint-disable-next-line typescript/prefer-promise-reject-errors
            reject(err);
          }
        },
        reject,
      };
    });
  }

  /**
   * The body as decoded batches, one per chunk read, then the decoder's flush: one async step per
   * chunk, with no generator or Readable in between (the hot loop of every stream).
   */
  decode<T>(decoder: { push(bytes: Uint8Array): T[]; end(): T[] }): AsyncIterable<T[]> {
    let flushed = false;
    const step = (chunk: Buffer | null): IteratorResult<T[]> => {
      if (chunk !== null) return { done: false, value: decoder.push(chunk) };
      if (flushed) return { done: true, value: undefined };
      flushed = true;
      return { done: false, value: decoder.end() };
    };
    const iterator: AsyncIterator<T[]> = {
      next: () => {
        if (flushed) return Promise.resolve({ done: true, value: undefined });
        const result = this.take(step);
        return result instanceof Promise ? result : Promise.resolve(result);
      },
      // Leaving early (client gone, timeout, error event) closes the upstream connection now.
      return: () => {
        this.destroy();
        return Promise.resolve({ done: true, value: undefined });
      },
    };
    return { [Symbol.asyncIterator]: () => iterator };
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    const step = (chunk: Buffer | null): IteratorResult<Buffer> =>
      chunk === null ? { done: true, value: undefined } : { done: false, value: chunk };
    return {
      next: () => {
        const result = this.take(step);
        return result instanceof Promise ? result : Promise.resolve(result);
      },
      return: async () => {
        this.destroy();
        return { done: true, value: undefined };
      },
    };
  }
}
