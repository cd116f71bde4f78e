import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import { acrossModels, acrossProjects, emptyHistogram, quantileOf, summarize } from './rollup-cells.ts';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 1, 12, 0);

function record(fields: Partial<LedgerRecord>): LedgerRecord {
  return {
    requestId: 'r',
    createdAt: T0,
    provider: 'mock',
    model: 'echo',
    inputTokens: 10,
    outputTokens: 5,
    costUsd: 0.001,
    ttftMs: 40,
    latencyMs: 120,
    outcome: 'ok',
    ...fields,
  } as LedgerRecord;
}

describe('rollups of a batch', () => {
  it('sums a batch per minute and provider/model: requests, errors, tokens, cost and histograms', () => {
    const cells = summarize(
      [
        record({}),
        record({ createdAt: T0 + 59_999, outcome: 'error', ttftMs: null }),
        record({ createdAt: T0 + MINUTE }),
        record({ model: 'slow' }),
        record({ createdAt: T0 + MINUTE, outcome: 'interrupted', ttftMs: null }),
        record({ createdAt: T0 + MINUTE, outcome: 'cancelled', ttftMs: null }),
      ],
      MINUTE,
    );
    const first = cells.find((c) => c.start === T0 && c.model === 'echo')!;
    assert.deepEqual(
      { requests: first.requests, errors: first.errors, input: first.inputTokens, output: first.outputTokens },
      { requests: 2, errors: 1, input: 20, output: 10 },
    );
    const second = cells.find((c) => c.start === T0 + MINUTE && c.model === 'echo')!;
    assert.equal(second.errors, 1, 'an interrupted request failed; a cancelled one was left by its client');
    assert.equal(first.costUsd, 0.002);
    // The errored request had no first token: one TTFT, two latencies.
    assert.equal(
      first.ttft.reduce((a, b) => a + b),
      1,
    );
    assert.equal(
      first.latency.reduce((a, b) => a + b),
      2,
    );
    assert.equal(cells.filter((c) => c.start === T0).length, 2);
    assert.deepEqual(
      cells.filter((c) => c.start === T0 + MINUTE).map((c) => c.model),
      ['echo'],
    );
  });

  it('sums per hour the same way, and orders cells by period, provider and model (one lock order for every writer)', () => {
    const records = [
      record({ createdAt: T0 + HOUR, model: 'b' }),
      record({ createdAt: T0 + 59 * MINUTE, model: 'b' }),
      record({ createdAt: T0, provider: 'alpha', model: 'z' }),
      record({ createdAt: T0 + 30 * MINUTE, model: 'a' }),
    ];
    assert.deepEqual(
      summarize(records, HOUR).map((c) => [c.start, c.provider, c.model, c.requests]),
      [
        [T0, 'alpha', 'z', 1],
        [T0, 'mock', 'a', 1],
        [T0, 'mock', 'b', 1],
        [T0 + HOUR, 'mock', 'b', 1],
      ],
    );
  });

  it('counts pairs past the per-minute bound as other', () => {
    const cells = summarize(
      Array.from({ length: 60 }, (_, i) => record({ model: `m${i}` })),
      MINUTE,
    );
    assert.equal(cells.length, 51);
    assert.equal(cells.find((c) => c.provider === 'other')?.requests, 10);
  });

  it("sums each project apart, the master key's under no project, and bounds the pairs per project", () => {
    const cells = summarize(
      [
        record({ projectId: 'proj_b' }),
        record({ projectId: 'proj_a' }),
        record({ projectId: null }),
        record({ projectId: 'proj_a', model: 'slow' }),
        ...Array.from({ length: 55 }, (_, i) => record({ projectId: 'proj_b', model: `m${i}` })),
      ],
      MINUTE,
    );
    assert.deepEqual(
      cells.filter((c) => c.model === 'echo' || c.model === 'slow').map((c) => [c.projectId, c.model, c.requests]),
      [
        ['', 'echo', 1],
        ['proj_a', 'echo', 1],
        ['proj_a', 'slow', 1],
        ['proj_b', 'echo', 1],
      ],
    );
    // proj_b's 56 pairs: 50 of them, and its other (6 requests); proj_a's stay its own.
    assert.equal(cells.filter((c) => c.projectId === 'proj_b').length, 51);
    assert.deepEqual(
      cells.filter((c) => c.provider === 'other').map((c) => [c.projectId, c.requests]),
      [['proj_b', 6]],
    );
  });

  it('sums the cells over their projects per period and provider/model, every count and bucket kept, in lock order', () => {
    const records = [
      record({ projectId: 'proj_b', ttftMs: 5, latencyMs: 30 }),
      record({ projectId: 'proj_a', outcome: 'error', costUsd: 0.25, inputTokens: 3 }),
      record({ projectId: null, ttftMs: null }),
      record({ projectId: 'proj_a', model: 'slow', createdAt: T0 + MINUTE }),
      record({ projectId: 'proj_b', provider: 'alpha', createdAt: T0 + MINUTE }),
    ];
    const cells = summarize(records, MINUTE);
    const summed = acrossProjects(cells);
    // The same as the batch summarized with no projects at all.
    assert.deepEqual(
      summed,
      summarize(
        records.map((r) => ({ ...r, projectId: null })),
        MINUTE,
      ),
    );
    assert.deepEqual(
      summed.map((c) => [c.start, c.provider, c.model, c.requests]),
      [
        [T0, 'mock', 'echo', 3],
        [T0 + MINUTE, 'alpha', 'echo', 1],
        [T0 + MINUTE, 'mock', 'slow', 1],
      ],
    );
    // The per-project cells are left as they were.
    assert.deepEqual(cells, summarize(records, MINUTE));
  });

  it('sums the cells over their models per period for the histograms: every bucket of every project and model, in lock order', () => {
    const records = [
      record({ projectId: 'proj_b', ttftMs: 5, latencyMs: 30 }),
      record({ projectId: 'proj_a', model: 'slow', ttftMs: 5, latencyMs: 600 }),
      record({ projectId: null, provider: 'alpha', ttftMs: null, latencyMs: 30 }),
      record({ projectId: 'proj_a', createdAt: T0 + MINUTE, latencyMs: 200_000 }),
    ];
    const perMinute = acrossModels(acrossProjects(summarize(records, MINUTE)));
    // The same as the batch summarized with one project and one model.
    assert.deepEqual(
      perMinute,
      summarize(
        records.map((r) => ({ ...r, projectId: null, provider: '', model: '' })),
        MINUTE,
      ),
    );
    assert.deepEqual(
      perMinute.map((c) => [c.start, c.requests, c.ttft[0], c.latency[2], c.latency[6], c.latency.at(-1)]),
      [
        [T0, 3, 2, 2, 1, 0],
        [T0 + MINUTE, 1, 0, 0, 0, 1],
      ],
    );
  });

  it("keeps each project's other in the sum: the requests add up, whatever the pairs bound folded", () => {
    const records = Array.from({ length: 120 }, (_, i) => record({ projectId: `proj_${Math.floor(i / 60)}`, model: `m${i % 60}` }));
    const summed = acrossProjects(summarize(records, MINUTE));
    assert.equal(
      summed.reduce((a, c) => a + c.requests, 0),
      120,
    );
    assert.equal(summed.find((c) => c.provider === 'other')?.requests, 20);
  });

  it("reads a quantile as its bucket's upper bound", () => {
    const counts = emptyHistogram();
    counts[1] = 50; // <= 25 ms
    counts[4] = 45; // <= 250 ms
    counts[counts.length - 1] = 5; // past the last bound
    assert.equal(quantileOf(counts, 0.5), 25);
    assert.equal(quantileOf(counts, 0.95), 250);
    assert.equal(quantileOf(counts, 0.99), Number.POSITIVE_INFINITY);
    assert.equal(quantileOf(emptyHistogram(), 0.5), null);
  });
});
