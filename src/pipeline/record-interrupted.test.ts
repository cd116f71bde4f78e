import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AdmittedRequest, RequestHolds, UnfinishedRequest } from '../accounting/journal-entries.ts';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import { PricingRegistry } from '../accounting/pricing.ts';
import { type InterruptedDeps, recordInterrupted } from './record-interrupted.ts';

const unfinished = (requestId: string, holds?: RequestHolds): UnfinishedRequest => {
  const admitted: AdmittedRequest = {
    requestId,
    createdAt: 1_000,
    keyId: 'k1',
    projectId: null,
    provider: 'up',
    model: 'm',
    requestedModel: 'up/m',
    surface: 'chat',
    streamed: true,
    promptTokens: 10,
    ...(holds ? { holds } : {}),
  };
  return { admitted };
};

function deps(stored: string[] | Error) {
  const calls = {
    written: [] as LedgerRecord[],
    settled: [] as [RequestHolds | undefined, string][],
    forgotten: [] as string[],
    logs: [] as string[],
  };
  const d: InterruptedDeps = {
    pricing: new PricingRegistry({ 'up/m': { input_mtok: 1, output_mtok: 1 } }),
    storedIds: async (ids) => {
      if (stored instanceof Error) throw stored;
      return new Set(ids.filter((id) => stored.includes(id)));
    },
    settle: (holds, record) => {
      calls.settled.push([holds, record.requestId]);
      return { ...record, budgetSpend: [] };
    },
    write: (record) => calls.written.push(record),
    forget: (id) => calls.forgotten.push(id),
    log: (m) => calls.logs.push(m),
  };
  return { d, calls };
}

describe('recordInterrupted (a crash loses every request in flight)', () => {
  it('writes one interrupted row per unfinished request, settled, and none for one the store has already', async () => {
    const holds: RequestHolds = { slots: [{ subject: 'key:k1', limit: 1 }] };
    const { d, calls } = deps(['b']);
    const written = await recordInterrupted([unfinished('a', holds), unfinished('b'), unfinished('c')], d);
    assert.deepEqual(
      written.map((r) => [r.requestId, r.outcome, r.costUsd]),
      [
        ['a', 'interrupted', 10 / 1e6],
        ['c', 'interrupted', 10 / 1e6],
      ],
    );
    assert.deepEqual(calls.written, written);
    assert.deepEqual(calls.settled, [
      [holds, 'a'],
      [undefined, 'c'],
    ]);
    assert.ok(
      written.every((r) => Array.isArray(r.budgetSpend)),
      'the settled record (with its spend) is the one written',
    );
    assert.deepEqual(calls.forgotten, ['b']);
    assert.deepEqual(calls.logs, [
      'ledger: 2 request(s) that were in progress when sluice stopped recorded as interrupted (1 had their row already)',
    ]);
  });

  it('records them all when the store cannot say which it has (its insert skips a row already there)', async () => {
    const { d, calls } = deps(new Error('connection refused'));
    await recordInterrupted([unfinished('a'), unfinished('b')], d);
    assert.equal(calls.written.length, 2);
    assert.match(calls.logs[0], /could not look up .*connection refused; recording them all/);
  });

  it('does nothing (not even a lookup) when nothing was left unfinished', async () => {
    const { d, calls } = deps(new Error('not called'));
    assert.deepEqual(await recordInterrupted([], d), []);
    assert.deepEqual(calls.logs, []);
  });
});
