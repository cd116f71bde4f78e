import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTestSchema, noPostgres } from '../../test/helpers/postgres.ts';
import { openDatabase } from './open-database.ts';
import type { StoreLocation } from './store-location.ts';
import { RejectionCounter, type RejectionRow, type RejectionSink, RejectionStore, WINDOW_MS } from './rejection-counter.ts';

const T0 = 1_760_000_040_000; // a minute's start

class FakeSink implements RejectionSink {
  writes: RejectionRow[][] = [];
  failing = false;
  async add(rows: readonly RejectionRow[]): Promise<void> {
    if (this.failing) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    this.writes.push(rows.map((r) => ({ ...r })));
  }
}

describe('RejectionCounter', () => {
  it('unauthenticated floods: 2,000 refused requests are one count per minute, surface and reason', async () => {
    let now = T0;
    const sink = new FakeSink();
    const counter = new RejectionCounter(sink, { flushIntervalMs: 60_000, now: () => now });
    for (let i = 0; i < 1500; i++) counter.count('chat', 'invalid_api_key');
    for (let i = 0; i < 300; i++) counter.count('responses', 'invalid_api_key');
    now = T0 + WINDOW_MS + 5; // the next minute
    for (let i = 0; i < 200; i++) counter.count('chat', 'missing_api_key');
    assert.equal(counter.pending, 2000);
    await counter.flush();
    assert.deepEqual(sink.writes, [
      [
        { windowStart: T0, surface: 'chat', code: 'invalid_api_key', count: 1500 },
        { windowStart: T0, surface: 'responses', code: 'invalid_api_key', count: 300 },
        { windowStart: T0 + WINDOW_MS, surface: 'chat', code: 'missing_api_key', count: 200 },
      ],
    ]);
    assert.equal(counter.pending, 0);
  });

  it('unauthenticated floods: counts wait in memory while the store is down, then go in one write', async () => {
    const logs: string[] = [];
    const sink = new FakeSink();
    sink.failing = true;
    const counter = new RejectionCounter(sink, { flushIntervalMs: 60_000, now: () => T0, log: (m) => logs.push(m) });
    for (let i = 0; i < 10; i++) counter.count('chat', 'invalid_api_key');
    await counter.flush();
    for (let i = 0; i < 5; i++) counter.count('chat', 'invalid_api_key');
    await counter.flush();
    assert.equal(counter.pending, 15);
    assert.deepEqual(logs, ['ledger: rejection counts not written, kept in memory: connect ECONNREFUSED']);
    sink.failing = false;
    await counter.flush();
    assert.deepEqual(sink.writes, [[{ windowStart: T0, surface: 'chat', code: 'invalid_api_key', count: 15 }]]);
    assert.equal(logs.at(-1), 'ledger: rejection counts written again');
  });

  it('unauthenticated floods: memory is bounded while the store is away; what does not fit is dropped, once logged', () => {
    const logs: string[] = [];
    let now = T0;
    const counter = new RejectionCounter(undefined, { flushIntervalMs: 10, maxKeys: 3, now: () => now, log: (m) => logs.push(m) });
    for (let minute = 0; minute < 10; minute++) {
      now = T0 + minute * WINDOW_MS;
      counter.count('chat', 'invalid_api_key');
    }
    assert.equal(counter.pending, 3);
    assert.deepEqual(logs, ['ledger: rejection counts: 3 windows waiting for the store; new ones dropped']);
  });

  it('writes on its own every flushIntervalMs once attached', async () => {
    const sink = new FakeSink();
    const counter = new RejectionCounter(undefined, { flushIntervalMs: 20, now: () => T0 });
    counter.count('chat', 'invalid_api_key');
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(sink.writes, []);
    counter.attach(sink);
    await new Promise((r) => setTimeout(r, 80));
    assert.equal(sink.writes.length, 1);
    await counter.close(100);
  });
});

const ENGINES: { name: string; skip: false | string; location: () => Promise<{ location: StoreLocation; drop: () => Promise<void> }> }[] = [
  { name: 'SQLite', skip: false, location: async () => ({ location: { path: ':memory:' }, drop: async () => {} }) },
  {
    name: 'PostgreSQL',
    skip: noPostgres,
    location: async () => {
      const schema = await createTestSchema();
      return { location: { databaseUrl: schema.url, path: ':memory:' }, drop: () => schema.drop() };
    },
  },
];

for (const engine of ENGINES) {
  describe(`RejectionStore on ${engine.name}`, { skip: engine.skip }, () => {
    it('unauthenticated floods: each write adds to the window row, never a row per request', async () => {
      const { location, drop } = await engine.location();
      const opened = await openDatabase(location);
      try {
        const store = new RejectionStore(opened.db);
        const counter = new RejectionCounter(store, { flushIntervalMs: 60_000, now: () => T0 });
        for (let round = 0; round < 4; round++) {
          for (let i = 0; i < 500; i++) counter.count('chat', 'invalid_api_key');
          await counter.flush();
        }
        counter.count('responses', 'missing_api_key');
        await counter.flush();
        assert.deepEqual(await store.list(), [
          { windowStart: T0, surface: 'chat', code: 'invalid_api_key', count: 2000 },
          { windowStart: T0, surface: 'responses', code: 'missing_api_key', count: 1 },
        ]);
        // The ledger itself got nothing.
        const { count } = await opened.db
          .selectFrom('ledger')
          .select((eb) => eb.fn.countAll<number>().as('count'))
          .executeTakeFirstOrThrow();
        assert.equal(Number(count), 0);
      } finally {
        await opened.close();
        await drop();
      }
    });
  });
}
