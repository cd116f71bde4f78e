import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { openDatabase } from '../../store/open-database.ts';
import type { OpenedDatabase } from '../../store/store-location.ts';
import { adminQuery, createTestSchema, noPostgres, type TestSchema } from '../../../test/helpers/postgres.ts';
import { startTcpProxy, type TcpProxy, viaProxy } from '../../../test/helpers/tcp-proxy.ts';
import type { GovernanceChange } from './governance-change.ts';
import { PostgresChangeChannel } from './postgres-change-channel.ts';

/** What a channel's instance heard. */
function receiver() {
  const heard = { changes: [] as GovernanceChange[], missed: 0 };
  return { heard, changed: (c: GovernanceChange) => heard.changes.push(c), missed: () => heard.missed++ };
}

async function until(done: () => boolean, what: string, ms = 5_000): Promise<number> {
  const started = Date.now();
  while (!done()) {
    if (Date.now() - started > ms) assert.fail(`${what} within ${ms} ms`);
    await sleep(10);
  }
  return Date.now() - started;
}

describe('key changes between instances over PostgreSQL LISTEN/NOTIFY', { skip: noPostgres }, () => {
  let schema: TestSchema;
  let store: OpenedDatabase;
  let proxy: TcpProxy;
  const channels: PostgresChangeChannel[] = [];
  const logs: string[] = [];

  const open = (url: string) => {
    const r = receiver();
    const channel = new PostgresChangeChannel({ url, db: store.db, receiver: r, log: (m) => logs.push(m) });
    channels.push(channel);
    channel.start();
    return { channel, heard: r.heard };
  };

  before(async () => {
    schema = await createTestSchema();
    store = await openDatabase({ databaseUrl: schema.url, path: ':memory:' });
    proxy = await startTcpProxy(Number(new URL(schema.url).port || 5432));
  });
  after(async () => {
    await Promise.all(channels.map((c) => c.close()));
    await store?.close();
    await proxy?.close();
    await schema?.drop();
  });

  it('revocation lags across instances (issue 25): a change published by one instance reaches the others within a second', async () => {
    const a = open(schema.url);
    const b = open(schema.url);
    await until(() => a.heard.missed === 1 && b.heard.missed === 1, 'both listening');
    a.channel.publish({ kind: 'key', id: 'k1' });
    const took = await until(() => b.heard.changes.length === 1, 'B hears it');
    assert.ok(took < 1_000, `${took} ms`);
    assert.deepEqual(b.heard.changes, [{ kind: 'key', id: 'k1' }]);
    // Its own notification reaches the publisher on its own connection, not necessarily before B's.
    await until(() => a.heard.changes.length === 1, 'A hears itself');
    assert.deepEqual(a.heard.changes, [{ kind: 'key', id: 'k1' }], 'the publisher hears itself too (forgetting twice is harmless)');
    // Someone else's payload on the channel is ignored.
    await adminQuery(schema.url, "select pg_notify('sluice_governance', 'not json'), pg_notify('sluice_governance', '{\"kind\":\"project\"}')");
    a.channel.publish({ kind: 'endpoint', project: 'p', name: 'chat' });
    await until(() => b.heard.changes.length === 2, 'B hears the endpoint');
    assert.deepEqual(b.heard.changes[1], { kind: 'endpoint', project: 'p', name: 'chat' });
  });

  it("keeps deployments sharing a database apart: another schema's changes are not heard", async () => {
    const other = await createTestSchema();
    const otherStore = await openDatabase({ databaseUrl: other.url, path: ':memory:' });
    const elsewhere = new PostgresChangeChannel({ url: other.url, db: otherStore.db, receiver: receiver(), log: () => {} });
    try {
      const here = open(schema.url);
      await until(() => here.heard.missed === 1, 'listening');
      elsewhere.publish({ kind: 'key', id: 'theirs' });
      open(schema.url).channel.publish({ kind: 'key', id: 'ours' });
      await until(() => here.heard.changes.length === 1, 'hears its own');
      // A moment for theirs, had it been heard: NOTIFYs are delivered in commit order, theirs went first.
      await sleep(100);
      assert.deepEqual(here.heard.changes, [{ kind: 'key', id: 'ours' }]);
    } finally {
      await elsewhere.close();
      await otherStore.close();
      await other.drop();
    }
  });

  it('a listening connection that drops is opened again, and the instance forgets its cache (it may have missed changes)', async () => {
    const a = open(schema.url);
    const b = open(viaProxy(schema.url, proxy));
    await until(() => a.heard.missed === 1 && b.heard.missed === 1, 'both listening');
    await proxy.cut();
    await until(() => logs.some((l) => l.startsWith('governance: not listening for key changes')), 'the drop logged');
    a.channel.publish({ kind: 'key', id: 'missed' });
    await proxy.restore();
    await until(() => b.heard.missed === 2, 'B listens again and forgets its cache', 10_000);
    assert.ok(logs.includes('governance: listening for key changes again'));
    a.channel.publish({ kind: 'key', id: 'after' });
    await until(() => b.heard.changes.some((c) => c.kind === 'key' && c.id === 'after'), 'B hears changes again');
  });
});
