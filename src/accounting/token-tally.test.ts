import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import type { CountQueue, CountSource } from './count-scheduler.ts';
import { estimateTokens, utf8Bytes } from './estimate-tokens.ts';
import { BACKGROUND_AFTER_CHARS, PIECE_CHARS, type TallyLimits, TokenTally } from './token-tally.ts';

// A fixed sample of English prose with code and tables (the README of an earlier commit): the
// live README grows, and an estimate's error bound must not move with it.
const README = readFileSync(new URL('../../test/fixtures/text/prose-sample.md', import.meta.url), 'utf8');
/** Prose and markdown longer than BACKGROUND_AFTER_CHARS. */
const LONG = `${README}\n${README}`;
const count = (s: string) => o200k(s, { disallowedSpecial: new Set<string>() });

/** The scheduler's part, done by hand: the test decides when the "worker" counts, and how. */
class FakeQueue implements CountQueue {
  readonly line = new Set<CountSource>();
  readonly urgent = new Set<CountSource>();
  room = true;
  loaded: Promise<void> = Promise.resolve();
  /** Pieces counted, in the order the worker saw them. */
  readonly seen: string[] = [];

  ready(): Promise<void> {
    return this.loaded;
  }
  submit(source: CountSource, urgent: boolean): void {
    this.line.add(source);
    if (urgent) this.urgent.add(source);
  }
  withdraw(source: CountSource): void {
    this.line.delete(source);
  }
  hasRoom(): boolean {
    return this.room;
  }
  /** Counts one batch of each source in line; `slice` pieces at most (the worker's time slice). */
  step(slice = Infinity, ms = 1): void {
    // A snapshot: the loop takes sources out of the line and puts them back.
    for (const source of Array.from(this.line)) {
      const batch = source.take(16 * 1024);
      if (source.queuedChars === 0) this.line.delete(source);
      const counts = batch.slice(0, slice).map(count);
      this.seen.push(...batch.slice(0, slice));
      source.counted(batch, counts, ms);
      if (source.queuedChars > 0) this.line.add(source);
    }
  }
  drain(): void {
    while (this.line.size > 0) this.step();
  }
}

const limits = (overrides: Partial<TallyLimits> = {}): TallyLimits => ({ maxCountedChars: 1 << 20, maxWorkerMs: 1000, waitMs: 1000, ...overrides });

function streamInto(tally: TokenTally, text: string, delta = 7): void {
  for (let i = 0; i < text.length; i += delta) tally.add(text.slice(i, i + delta));
}

describe('TokenTally', () => {
  it('counts a long output ahead as it arrives, in bounded pieces, exactly', async () => {
    const queue = new FakeQueue();
    const tally = new TokenTally('o200k', limits(), queue);
    streamInto(tally, LONG.slice(0, BACKGROUND_AFTER_CHARS - 10));
    assert.equal(queue.line.size, 0, 'a short output is not counted ahead (its upstream usually reports usage)');
    streamInto(tally, LONG.slice(BACKGROUND_AFTER_CHARS - 10));
    assert.equal(queue.line.size, 1);
    assert.equal(queue.urgent.size, 0, 'counted in the background until someone waits');
    queue.drain();
    assert.ok(queue.seen.length > LONG.length / PIECE_CHARS - 2);
    assert.ok(queue.seen.every((p) => p.length <= PIECE_CHARS));
    // At the end only the last piece is left to count.
    const total = tally.total();
    assert.ok(queue.urgent.has(tally));
    assert.ok(tally.queuedChars <= PIECE_CHARS);
    queue.drain();
    assert.equal(await total, count(LONG));
    assert.equal(await tally.total(), count(LONG), 'settled once');
  });

  it("counts a prompt's parts apart", async () => {
    const queue = new FakeQueue();
    const tally = new TokenTally('o200k', limits(), queue);
    for (const part of ['in', 'put']) {
      tally.add(part);
      tally.endPart();
    }
    const total = tally.total();
    queue.drain();
    assert.equal(await total, count('in') + count('put'));
    assert.notEqual(count('in') + count('put'), count('input'));
  });

  it('waits for the worker at most waitMs, then estimates what is left at the rate of what was counted', async () => {
    const queue = new FakeQueue();
    const tally = new TokenTally('o200k', limits({ waitMs: 50 }), queue);
    tally.add(LONG);
    tally.endPart();
    // Half of the text is counted; the worker then says nothing more.
    while (queue.seen.join('').length < LONG.length / 2) queue.step(1);
    const counted = queue.seen.reduce((n, p) => n + count(p), 0);
    const countedBytes = utf8Bytes(queue.seen.join(''));
    const started = performance.now();
    const total = await tally.total();
    const waited = performance.now() - started;
    assert.ok(waited >= 45 && waited < 1000, `waited ${waited} ms`);
    const rest = utf8Bytes(LONG) - countedBytes;
    assert.equal(total, counted + estimateTokens(rest, { tokens: counted, bytes: countedBytes }));
    assert.ok(Math.abs(total - count(LONG)) / count(LONG) < 0.05, `${total} vs ${count(LONG)}`);
    assert.equal(queue.line.has(tally), false, 'out of the line');
  });

  it('never waits past the signal (the deadline), and not at all when it already fired', async () => {
    const queue = new FakeQueue();
    const late = new TokenTally('o200k', limits({ waitMs: 60_000 }), queue);
    late.add(README);
    const deadline = new AbortController();
    setTimeout(() => deadline.abort(), 30);
    const started = performance.now();
    assert.equal(await late.total(deadline.signal), estimateTokens(utf8Bytes(README)));
    assert.ok(performance.now() - started < 1000);

    const gone = new TokenTally('o200k', limits({ waitMs: 60_000 }), queue);
    gone.add('Hello there');
    assert.equal(await gone.total(AbortSignal.abort()), estimateTokens(utf8Bytes('Hello there')));
  });

  it("does not count the worker's one-time load as waiting", async () => {
    const queue = new FakeQueue();
    queue.loaded = new Promise((resolve) => setTimeout(resolve, 100));
    const tally = new TokenTally('o200k', limits({ waitMs: 50 }), queue);
    tally.add(README);
    const total = tally.total();
    void queue.loaded.then(() => setTimeout(() => queue.drain(), 10));
    assert.equal(await total, count(README));
  });

  it('counts at most maxCountedChars with the BPE; the rest is estimated', async () => {
    const queue = new FakeQueue();
    const tally = new TokenTally('o200k', limits({ maxCountedChars: 8 * 1024 }), queue);
    streamInto(tally, LONG);
    const total = tally.total();
    queue.drain();
    const countedChars = queue.seen.join('').length;
    assert.ok(countedChars <= 8 * 1024 && countedChars > 6 * 1024, `${countedChars} counted`);
    const exact = count(LONG);
    assert.ok(Math.abs((await total) - exact) / exact < 0.1, `${await total} vs ${exact}`);
  });

  it('stops counting past maxWorkerMs of worker time: what is in line is estimated', async () => {
    const queue = new FakeQueue();
    const tally = new TokenTally('o200k', limits({ maxWorkerMs: 5 }), queue);
    tally.add(LONG);
    tally.endPart();
    queue.step(Infinity, 6);
    const seen = queue.seen.length;
    assert.equal(queue.line.has(tally), false, 'withdrawn');
    tally.add(' and more');
    const total = tally.total();
    queue.drain();
    assert.equal(queue.seen.length, seen, 'nothing more counted');
    const exact = count(`${LONG} and more`);
    assert.ok(Math.abs((await total) - exact) / exact < 0.1);
  });

  it('estimates rather than counts ahead when the line is full; a text someone waits on is still counted', async () => {
    const queue = new FakeQueue();
    queue.room = false;
    const tally = new TokenTally('o200k', limits(), queue);
    streamInto(tally, LONG.slice(0, BACKGROUND_AFTER_CHARS + 3 * PIECE_CHARS));
    assert.equal(queue.line.size, 0, 'nothing queued ahead');
    tally.add(' the end');
    const total = tally.total();
    queue.drain();
    assert.equal(queue.seen.length, 0, 'once over budget, all of the text is estimated, its tail included');
    assert.equal(await total, estimateTokens(utf8Bytes(`${LONG.slice(0, BACKGROUND_AFTER_CHARS + 3 * PIECE_CHARS)} the end`)));

    const small = new TokenTally('o200k', limits(), queue);
    small.add('A short answer.');
    const smallTotal = small.total();
    queue.drain();
    assert.equal(await smallTotal, count('A short answer.'), 'a text someone waits on is counted even when the line is full');
  });

  it('sends back the pieces past the time slice, first in line', async () => {
    const queue = new FakeQueue();
    const tally = new TokenTally('o200k', limits(), queue);
    tally.add(README);
    const total = tally.total();
    while (queue.line.size > 0) queue.step(1);
    assert.equal(queue.seen.join(''), README, 'in order, each piece once');
    assert.equal(await total, count(README));
  });

  it('estimates what the worker could not count', async () => {
    const queue = new FakeQueue();
    const tally = new TokenTally('o200k', limits(), queue);
    tally.add(README);
    const total = tally.total();
    const batch = tally.take(1 << 20);
    tally.counted(batch, null, 0);
    assert.equal(await total, estimateTokens(utf8Bytes(README)));
  });

  it('close(): nothing more is counted, and the total is what was counted plus the estimate', async () => {
    const queue = new FakeQueue();
    const tally = new TokenTally('o200k', limits(), queue);
    tally.add(README);
    tally.endPart();
    tally.close();
    assert.equal(queue.line.has(tally), false);
    tally.add('ignored');
    assert.equal(await tally.total(), estimateTokens(utf8Bytes(README)));
  });

  it('soFar(): what was counted plus an estimate of the text in line, waiting for nothing and changing nothing', async () => {
    const queue = new FakeQueue();
    const tally = new TokenTally('o200k', limits(), queue);
    const short = 'Bonjour, ça va? 日本語';
    tally.add(short);
    assert.equal(tally.soFar(), estimateTokens(utf8Bytes(short)), 'nothing counted yet: the estimate of all of it');
    streamInto(tally, LONG);
    queue.step();
    // Pieces are cut where a count does not depend on the text around them: their counts add up.
    const counted = queue.seen.reduce((n, piece) => n + count(piece), 0);
    const rest = (short + LONG).slice(queue.seen.join('').length);
    const sample = { tokens: counted, bytes: utf8Bytes(queue.seen.join('')) };
    assert.equal(tally.soFar(), counted + estimateTokens(utf8Bytes(rest), sample));
    const total = tally.total();
    queue.drain();
    assert.equal(await total, count(short + LONG), 'the final count is still exact');
    assert.equal(tally.soFar(), await total, 'once settled, the total');
  });
});
