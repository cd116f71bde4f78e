import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AuditStore } from '../../store/audit-store.ts';
import { AuditLog } from './audit-log.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** A store of `rows` old entries that deletes as many as asked per call and says what it was asked. */
function fakeStore(rows: number) {
  const calls: { before: number; batch: number }[] = [];
  const store = {
    prune: async (before: number, batch: number) => {
      calls.push({ before, batch });
      const n = Math.min(rows, batch);
      rows -= n;
      return n;
    },
  } as unknown as AuditStore;
  return { store, calls, left: () => rows };
}

function auditLog(retentionDays: number) {
  return new AuditLog({
    stored: true,
    retentionDays: () => retentionDays,
    log: () => {},
    logEntry: () => {},
    now: () => 100 * DAY_MS,
    firstPruneMs: 0,
  });
}

describe('AuditLog.prune', () => {
  it('deletes what is past the retention a batch at a time when the store opens, and stops at a short batch', async () => {
    const log = auditLog(30);
    const { store, calls, left } = fakeStore(2_500);
    log.attach(store);
    await log.close();
    assert.equal(left(), 0);
    assert.deepEqual(
      calls,
      [1, 2, 3].map(() => ({ before: 70 * DAY_MS, batch: 1_000 })),
    );
  });

  it('a run is bounded: a long backlog is left for the next run', async () => {
    const log = auditLog(1);
    const { store, left } = fakeStore(60_000);
    log.attach(store);
    await log.close();
    assert.equal(left(), 10_000);
  });

  it('retention_days 0 keeps everything', async () => {
    const log = auditLog(0);
    const { store, calls } = fakeStore(10);
    log.attach(store);
    await log.close();
    assert.equal(await log.prune(), 0);
    assert.deepEqual(calls, []);
  });
});
