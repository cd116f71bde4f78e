import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { CountScheduler, type CountSource, type Encoding, MAX_QUEUED_CHARS } from './count-scheduler.ts';
import { splitLongRuns } from './split-for-count.ts';

const AS_TEXT = { disallowedSpecial: new Set<string>() };

/** Lowercase letters without a break: the slowest text for the BPE, ~3-9 us a character. */
function unbroken(length: number, seed: number): string {
  let s = '';
  let x = seed;
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    s += String.fromCharCode(0x61 + ((x >>> 16) % 26));
  }
  return s;
}

/** A source of fixed pieces that logs when each of its batches comes back. */
class ListSource implements CountSource {
  readonly name: string;
  readonly encoding: Encoding;
  readonly counts: number[] = [];
  readonly batches: number[] = [];
  readonly done: Promise<void>;
  private finish!: () => void;
  private readonly pieces: string[];
  private readonly log: string[];
  private readonly perBatch: number;

  constructor(name: string, pieces: string[], log: string[], encoding: Encoding = 'o200k', perBatch = Infinity) {
    this.name = name;
    this.encoding = encoding;
    this.log = log;
    this.perBatch = perBatch;
    this.pieces = [...pieces];
    this.done = new Promise((resolve) => {
      this.finish = resolve;
    });
  }

  get queuedChars(): number {
    return this.pieces.reduce((n, p) => n + p.length, 0);
  }

  take(maxChars: number): string[] {
    const batch: string[] = [];
    let length = 0;
    while (this.pieces.length > 0 && batch.length < this.perBatch && (batch.length === 0 || length + this.pieces[0].length <= maxChars)) {
      const piece = this.pieces.shift() as string;
      batch.push(piece);
      length += piece.length;
    }
    return batch;
  }

  counted(pieces: string[], counts: number[] | null, _ms: number): void {
    assert.ok(counts, 'the worker counted');
    this.log.push(this.name);
    this.batches.push(counts.length);
    this.counts.push(...counts);
    this.pieces.unshift(...pieces.slice(counts.length));
    if (this.pieces.length === 0) this.finish();
  }
}

describe('CountScheduler', () => {
  // Its worker is unreferenced when idle: the test process ends without stopping it.
  const scheduler = new CountScheduler();
  before(() => scheduler.ready());

  it('counts in the worker, text that looks like a special token as text, and lives on', async () => {
    const log: string[] = [];
    const texts = ['a <|endoftext|> b', 'Hello, world! Ünïcödé 日本語 👋'];
    const o = new ListSource('o', texts, log);
    scheduler.submit(o, true);
    await o.done;
    assert.deepEqual(
      o.counts,
      texts.map((t) => o200k(t, AS_TEXT)),
    );
    const c = new ListSource('c', texts, log, 'cl100k');
    scheduler.submit(c, true);
    await c.done;
    assert.deepEqual(
      c.counts,
      texts.map((t) => cl100k(t, AS_TEXT)),
    );
    assert.notDeepEqual(c.counts, o.counts);
  });

  it('a small count waits for at most one batch of a big one in flight', async () => {
    const log: string[] = [];
    const big = new ListSource(
      'big',
      Array.from({ length: 64 }, (_, i) => unbroken(1024, i + 1)),
      log,
    );
    scheduler.submit(big, false);
    while (log.length < 2) await new Promise((r) => setTimeout(r, 1));
    const small = new ListSource('small', ['A short answer.'], log);
    const before = log.length;
    scheduler.submit(small, true);
    await small.done;
    const between = log.slice(before, log.indexOf('small'));
    assert.ok(between.length <= 1, `big batches before the small one: ${between.length}`);
    scheduler.withdraw(big);
  });

  it('ends a batch of slow text after its time slice, and the rest comes back', async () => {
    const log: string[] = [];
    const pieces = Array.from({ length: 16 }, (_, i) => unbroken(1024, 100 + i));
    const slow = new ListSource('slow', pieces, log);
    scheduler.submit(slow, true);
    await slow.done;
    assert.ok(slow.batches[0] < 16, `the first batch counted ${slow.batches[0]} of 16 pieces`);
    const expected = pieces.map((p) => splitLongRuns(p).reduce((n, s) => n + o200k(s), 0));
    assert.deepEqual(slow.counts, expected, 'every piece counted once, in order');
  });

  it('serves texts someone waits on first, in turn', async () => {
    const log: string[] = [];
    const pieces = (n: number) => Array.from({ length: n }, (_, i) => `piece ${i} of some ordinary text.`);
    // Submitted while a batch is in flight, so that the order below is the scheduler's choice.
    const blocker = new ListSource('blocker', [unbroken(1024, 7)], log);
    scheduler.submit(blocker, true);
    const background = new ListSource('background', pieces(2), log, 'o200k', 1);
    const a = new ListSource('a', pieces(3), log, 'o200k', 1);
    const b = new ListSource('b', pieces(3), log, 'o200k', 1);
    scheduler.submit(background, false);
    scheduler.submit(a, true);
    scheduler.submit(b, true);
    await Promise.all([background.done, a.done, b.done]);
    assert.deepEqual(log, ['blocker', 'a', 'b', 'a', 'b', 'a', 'b', 'background', 'background']);
  });

  it('has room for at most MAX_QUEUED_CHARS waiting', async () => {
    const log: string[] = [];
    // A batch in flight, so that the next source stays in line.
    const blocker = new ListSource('blocker', [unbroken(1024, 9)], log);
    scheduler.submit(blocker, true);
    const waiting = new ListSource('waiting', ['x'], log);
    Object.defineProperty(waiting, 'queuedChars', { value: MAX_QUEUED_CHARS - 10 });
    scheduler.submit(waiting, false);
    assert.equal(scheduler.hasRoom(10), true);
    assert.equal(scheduler.hasRoom(11), false);
    scheduler.withdraw(waiting);
    assert.equal(scheduler.hasRoom(11), true);
    await blocker.done;
  });
});
