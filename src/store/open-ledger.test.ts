import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { ledgerRecord } from '../../test/helpers/ledger-records.ts';
import { configSchema } from '../config/schema.ts';
import type { LedgerStore } from './ledger-store.ts';
import { openDatabase } from './open-database.ts';
import type { OpenedDatabase } from './store-location.ts';
import { type LedgerSettings, ledgerSettings, startLedger } from './open-ledger.ts';
import { UnusableStoreError } from './unusable-store-error.ts';

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

function settings(open: LedgerSettings['open'], extra: Partial<LedgerSettings> = {}) {
  const logs: string[] = [];
  let store: LedgerStore | undefined;
  const s: LedgerSettings = {
    store: { databaseUrl: 'postgres://sluice:secret@db.internal:6543/ledger', path: ':memory:' },
    writer: { flushIntervalMs: 5, batchSize: 100, maxBuffered: 1000 },
    shutdownFlushMs: 500,
    log: (m) => logs.push(m),
    onOpen: (stores) => (store = stores.ledgerStore),
    retry: { firstMs: 20, maxMs: 80 },
    open,
    ...extra,
  };
  return { s, logs, store: () => store };
}

const sqlite = () => openDatabase({ path: ':memory:' });

describe('startLedger', () => {
  it('crash windows: a store down at start-up is retried while records wait; they are written once it opens', async () => {
    let calls = 0;
    const { s, logs, store } = settings(async () => {
      calls++;
      if (calls <= 3) throw refused();
      return sqlite();
    });
    const ledger = await startLedger(s);
    // Start-up did not wait for the store, and said why, without the password.
    assert.equal(store(), undefined);
    assert.equal(
      logs[0],
      'ledger: the store (PostgreSQL db.internal:6543/ledger) is unavailable: connect ECONNREFUSED 127.0.0.1:5432. ' +
        'Serving anyway: records wait in memory (up to 1000) until it opens; retrying in 20 ms',
    );
    for (let i = 0; i < 5; i++) ledger.writer.write(ledgerRecord({ requestId: `r${i}` }));
    await ledger.opened;
    assert.equal(calls, 4);
    assert.match(logs[1], /still unavailable \(attempt 2\).*5 record\(s\) waiting; retrying in 40 ms$/);
    assert.equal(logs.at(-1), 'ledger: the store (PostgreSQL db.internal:6543/ledger) is open after 4 attempts; writing the 5 record(s) that waited');
    await ledger.writer.flush();
    assert.equal((await store()?.get('r4'))?.requestId, 'r4');
    assert.ok(!logs.join('\n').includes('secret'));
    await ledger.close();
  });

  it('a store that retrying cannot fix (half-migrated) ends the start with its reason instead of being retried forever', async () => {
    let calls = 0;
    const { s } = settings(async () => {
      calls++;
      throw new UnusableStoreError('PostgreSQL schema "public" holds sluice\'s tables but no record of the migrations');
    });
    await assert.rejects(startLedger(s), /holds sluice's tables but no record of the migrations/);
    await sleep(100);
    assert.equal(calls, 1, 'retried');
  });

  it('a healthy store is open before startLedger resolves', async () => {
    const { s, logs, store } = settings(sqlite);
    const ledger = await startLedger(s);
    assert.ok(store());
    assert.deepEqual(logs, []);
    await ledger.close();
  });

  it('start-up does not wait longer than firstAttemptMs for a slow store; a shutdown meanwhile closes what opens later', async () => {
    let opened: OpenedDatabase | undefined;
    let closed = false;
    const { s, logs } = settings(
      async () => {
        // Far longer than firstAttemptMs, and than the margin a loaded machine needs over it.
        await sleep(600);
        opened = await sqlite();
        const close = opened.close;
        return {
          ...opened,
          close: async () => {
            closed = true;
            await close();
          },
        };
      },
      { firstAttemptMs: 30 },
    );
    const start = performance.now();
    const ledger = await startLedger(s);
    assert.ok(performance.now() - start < 400);
    assert.match(logs[0], /is taking long to open/);
    ledger.writer.write(ledgerRecord({ requestId: 'waits' }));
    const result = ledger.close();
    await result;
    assert.ok(logs.some((l) => l === 'ledger: shutdown: 1 record(s) could not be written within 500 ms and are lost'));
    for (const begun = performance.now(); !closed && performance.now() - begun < 3_000;) await sleep(20);
    assert.ok(opened && closed, 'the database opened after shutdown was not closed');
  });
});

describe('ledgerSettings', () => {
  const journalOf = (ledger: Record<string, unknown>, store: Record<string, unknown> = {}) =>
    ledgerSettings(configSchema.parse({ ledger, store }), () => {}, undefined).journal;

  it('durable: true puts the journal beside the store; ledger.journal names it; neither: no journal', () => {
    assert.deepEqual(journalOf({ durable: true }, { path: '/var/lib/sluice/sluice.db' }), {
      dir: '/var/lib/sluice/ledger-journal',
      syncMs: 100,
      progressMs: 1_000,
    });
    assert.deepEqual(journalOf({ journal: '/tmp/j', journal_sync_ms: 0, journal_progress_ms: 250 }), { dir: '/tmp/j', syncMs: 0, progressMs: 250 });
    assert.equal(journalOf({}), undefined);
  });

  it('a shutdown spills to the journal directory, or to ledger-journal beside the store file without one', () => {
    const spillOf = (ledger: Record<string, unknown>, store: Record<string, unknown> = {}) =>
      ledgerSettings(configSchema.parse({ ledger, store }), () => {}, undefined).spillDir;
    assert.equal(spillOf({}, { path: '/var/lib/sluice/sluice.db' }), '/var/lib/sluice/ledger-journal');
    assert.equal(spillOf({ journal: '/tmp/j' }), '/tmp/j');
    assert.equal(spillOf({}, { path: ':memory:' }), undefined);
  });
});
