import assert from 'node:assert/strict';
import { createServer, type Server, type Socket, connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/store/open-database.ts';
import { startGateway } from '../helpers/gateway.ts';
import { adminQuery, createTestSchema, noPostgres, type TestSchema } from '../helpers/postgres.ts';

/**
 * A TCP proxy on 127.0.0.1 in front of Postgres that the test can cut. Stopping the real
 * Postgres service is not an option here (CI shares it), and to the client side of the
 * connection a cut proxy is the same failure: open connections die mid-query and new ones are
 * refused until it comes back.
 */
interface Cuttable {
  port: number;
  /** Destroys every open connection and refuses new ones. */
  stop(): Promise<void>;
  /** Accepts again, on the same port. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

async function startProxy(targetHost: string, targetPort: number): Promise<Cuttable> {
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    // A cut connection errors on both ends; that is the point, not a test failure.
    s.on('error', () => {});
  };
  const server: Server = createServer((client) => {
    track(client);
    const upstream = connect(targetPort, targetHost);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
  await listen(0);
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    stop,
    restart: () => listen(port),
    close: () => (server.listening ? stop() : Promise.resolve()),
  };
}

/** The schema's URL, pointed at the proxy instead of Postgres. */
function viaProxy(url: string, port: number): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return u.toString();
}

describe('ledger on PostgreSQL through an outage', { skip: noPostgres }, () => {
  let schema: TestSchema;
  let proxy: Cuttable;
  before(async () => {
    schema = await createTestSchema();
    const target = new URL(schema.url);
    proxy = await startProxy(target.hostname, Number(target.port || 5432));
  });
  after(async () => {
    await proxy?.close();
    await schema?.drop();
  });

  it('a connection cut mid-query fails that query, not the process', async () => {
    const { db } = await openDatabase({ databaseUrl: viaProxy(schema.url, proxy.port), path: ':memory:' });
    try {
      const slow = sql`select pg_sleep(30)`.execute(db);
      await sleep(150);
      await proxy.stop();
      await assert.rejects(slow, /Connection terminated|ECONNRESET/);
      await proxy.restart();
      // The pool recovers: the dead client was discarded, a new connection works.
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db);
      assert.deepEqual(rows, [{ one: 1 }]);
    } finally {
      await db.destroy();
    }
  });

  it('loses no record when Postgres goes away for a second mid-load and comes back', async () => {
    const gw = await startGateway({
      store: { database_url: viaProxy(schema.url, proxy.port) },
      // Small batches written often, so batches are in flight when the connection is cut.
      ledger: { flush_interval_ms: 10, batch_size: 8 },
    });
    const total = 200;
    const concurrency = 10;
    const seen: string[] = [];
    let next = 0;
    let outage: Promise<void> | undefined;
    async function worker(): Promise<void> {
      while (next < total) {
        const n = next++;
        const res = await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'mock/echo', messages: [{ role: 'user', content: `request ${n}` }], stream: true }),
        });
        const text = await res.text();
        assert.equal(res.status, 200);
        assert.ok(text.endsWith('data: [DONE]\n\n'));
        seen.push(res.headers.get('x-request-id') ?? '');
        // A quarter in, cut the database for about a second while the load goes on.
        if (seen.length === total / 4) {
          outage = (async () => {
            await proxy.stop();
            await sleep(1000);
            await proxy.restart();
          })();
        }
      }
    }
    try {
      await Promise.all(Array.from({ length: concurrency }, worker));
      await outage;
      // The writer noticed the outage (else this test proved nothing).
      assert.ok((gw.gateway.context.accounting.ledger?.stats.failures ?? 0) > 0, 'no ledger write failed during the outage');
    } finally {
      // Graceful shutdown flushes what is still buffered.
      await gw.close();
    }
    assert.equal(seen.length, total);
    assert.equal(new Set(seen).size, total);
    assert.ok(seen.every((id) => id.length > 0));
    const { rows } = await adminQuery(
      schema.url,
      'select request_id, count(*)::int as n from ledger where request_id = any($1) group by request_id',
      [seen],
    );
    assert.equal(rows.length, total, `${total - rows.length} request(s) have no ledger row`);
    assert.ok(rows.every((r) => r.n === 1));
    const { rows: all } = await adminQuery(schema.url, 'select count(*)::int as n, min(outcome) as lo, max(outcome) as hi from ledger');
    assert.deepEqual(all, [{ n: total, lo: 'ok', hi: 'ok' }]);
  });
});
