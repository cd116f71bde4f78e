import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { Worker } from 'node:worker_threads';
import { Kysely, sql } from 'kysely';
import { classifyStoreError } from './classify-store-error.ts';
import { SqliteThreadDialect } from './sqlite-thread-dialect.ts';

interface Db {
  t: { id: number; name: string };
}

const run = promisify(execFile);

/** Runs `body` in a fresh Node process that has `db` (a Kysely over the thread dialect on `path`). */
async function inProcess(path: string, body: string): Promise<{ stdout: string; ms: number }> {
  const dialect = new URL('./sqlite-thread-dialect.ts', import.meta.url).href;
  const script = `import { Kysely, sql } from 'kysely';
    import { SqliteThreadDialect } from ${JSON.stringify(dialect)};
    const db = new Kysely({ dialect: new SqliteThreadDialect(${JSON.stringify(path)}) });
    ${body}`;
  const started = Date.now();
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { timeout: 30_000, cwd: process.cwd() });
  return { stdout, ms: Date.now() - started };
}

describe('SqliteThreadDialect: node:sqlite on a worker thread', () => {
  let dir: string;
  let path: string;
  let db: Kysely<Db>;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-sqlite-thread-'));
    path = join(dir, 'test.db');
    db = new Kysely<Db>({ dialect: new SqliteThreadDialect(path) });
    await sql`create table t (id integer primary key, name text not null)`.execute(db);
  });
  afterEach(async () => {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the connection runs with SQLITE_SETTINGS: WAL, NORMAL sync, a 5 s busy timeout, temp tables and journals in memory', async () => {
    const pragma = async (name: string) => Object.values((await sql.raw(`PRAGMA ${name}`).execute(db)).rows[0] as object)[0];
    assert.equal(await pragma('journal_mode'), 'wal');
    assert.equal(await pragma('synchronous'), 1);
    assert.equal(await pragma('busy_timeout'), 5000);
    assert.equal(await pragma('temp_store'), 2);
  });

  it('runs queries and returns rows, affected counts and insert ids', async () => {
    const inserted = await db.insertInto('t').values({ id: 7, name: 'seven' }).executeTakeFirstOrThrow();
    assert.equal(inserted.insertId, 7n);
    assert.equal(inserted.numInsertedOrUpdatedRows, 1n);
    const updated = await db.updateTable('t').set({ name: 'SEVEN' }).where('id', '=', 7).executeTakeFirstOrThrow();
    assert.equal(updated.numUpdatedRows, 1n);
    assert.deepEqual(await db.selectFrom('t').selectAll().execute(), [{ id: 7, name: 'SEVEN' }]);
  });

  it('a transaction commits its writes together, and rolls them all back when its body throws', async () => {
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('t').values({ id: 1, name: 'a' }).execute();
      await trx.insertInto('t').values({ id: 2, name: 'b' }).execute();
    });
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await trx.insertInto('t').values({ id: 3, name: 'c' }).execute();
        throw new Error('changed my mind');
      }),
      /changed my mind/,
    );
    const ids = await db.selectFrom('t').select('id').orderBy('id').execute();
    assert.deepEqual(
      ids.map((r) => r.id),
      [1, 2],
    );
  });

  it('a query sent while a transaction is open waits for it to end (one connection, lent to one at a time)', async () => {
    const order: string[] = [];
    let letCommit: () => void = () => {};
    const mayCommit = new Promise<void>((r) => (letCommit = r));
    const transaction = db.transaction().execute(async (trx) => {
      await trx.insertInto('t').values({ id: 1, name: 'uncommitted' }).execute();
      await mayCommit;
      order.push('commit');
    });
    // Sent while the row is uncommitted: on a shared connection it would see it (and could be
    // caught up in a rollback); it runs after the commit instead.
    const read = db
      .selectFrom('t')
      .select('name')
      .execute()
      .then((rows) => {
        order.push('read');
        return rows;
      });
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(order, []);
    letCommit();
    await transaction;
    assert.deepEqual(await read, [{ name: 'uncommitted' }]);
    assert.deepEqual(order, ['commit', 'read']);
  });

  it('many queries at once each get their own answer', async () => {
    await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        db
          .insertInto('t')
          .values({ id: i, name: `n${i}` })
          .execute(),
      ),
    );
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => db.selectFrom('t').select('name').where('id', '=', i).executeTakeFirstOrThrow()),
    );
    assert.deepEqual(
      answers.map((a) => a.name),
      Array.from({ length: 200 }, (_, i) => `n${i}`),
    );
  });

  it('errors come back as node:sqlite raised them: message, code and SQLite result code, so they classify the same', async () => {
    await db.insertInto('t').values({ id: 1, name: 'a' }).execute();
    const duplicate = await db
      .insertInto('t')
      .values({ id: 1, name: 'again' })
      .execute()
      .catch((err: unknown) => err);
    assert.ok(duplicate instanceof Error);
    assert.match(duplicate.message, /UNIQUE constraint failed: t.id/);
    assert.equal((duplicate as Error & { code?: string }).code, 'ERR_SQLITE_ERROR');
    // SQLITE_CONSTRAINT_PRIMARYKEY (1555): the bad value is the batch's fault.
    assert.equal((duplicate as Error & { errcode?: number }).errcode, 1555);
    assert.equal(classifyStoreError(duplicate), 'data');

    const missing = await sql`select * from nowhere`.execute(db).catch((err: unknown) => err);
    assert.equal((missing as Error & { errcode?: number }).errcode, 1);
    assert.match((missing as Error).message, /no such table: nowhere/);

    // A value node:sqlite refuses to bind: its own code (and class), as when it ran on the main thread.
    const unbindable = await sql`select ${Symbol('x') as unknown as string} as v`.execute(db).catch((err: unknown) => err);
    assert.ok(unbindable instanceof TypeError, String(unbindable));
    assert.equal(classifyStoreError(unbindable), 'data');

    // The connection is still fine afterwards.
    assert.equal((await db.selectFrom('t').select('id').execute()).length, 1);
  });

  it('a file that cannot be opened fails the first query with node:sqlite error, and ends the thread', async () => {
    // A directory is not a database file.
    const broken = new Kysely<Db>({ dialect: new SqliteThreadDialect(dir) });
    const err = await broken
      .selectFrom('t')
      .selectAll()
      .execute()
      .catch((e: unknown) => e);
    assert.equal((err as Error & { code?: string }).code, 'ERR_SQLITE_ERROR');
    assert.equal((err as Error & { errcode?: number }).errcode, 14);
    await broken.destroy();
  });

  it('closing closes the file (its WAL checkpointed away) and ends the thread; a new one opens it again', async () => {
    await db.insertInto('t').values({ id: 1, name: 'before close' }).execute();
    assert.ok(existsSync(`${path}-wal`));
    await db.destroy();
    assert.equal(existsSync(`${path}-wal`), false);
    await assert.rejects(db.selectFrom('t').selectAll().execute(), /destroyed/);
    db = new Kysely<Db>({ dialect: new SqliteThreadDialect(path) });
    assert.deepEqual(await db.selectFrom('t').select('name').execute(), [{ name: 'before close' }]);
  });

  it('a thread that ends by itself is replaced by the next query: committed rows kept, an open transaction rolled back', async () => {
    const threads: Worker[] = [];
    const watched = new Kysely<Db>({ dialect: new SqliteThreadDialect(path, { started: (thread) => threads.push(thread) }) });
    await watched.insertInto('t').values({ id: 1, name: 'committed' }).execute();
    let inTransaction: () => void = () => {};
    const entered = new Promise<void>((resolve) => (inTransaction = resolve));
    const transaction = watched.transaction().execute(async (trx) => {
      await trx.insertInto('t').values({ id: 2, name: 'never committed' }).execute();
      inTransaction();
      await trx.insertInto('t').values({ id: 3, name: 'sent after the end' }).execute();
    });
    await entered;
    // An end the store did not ask for, as a crash of the thread would be.
    await threads[0].terminate();
    const lost = await transaction.then(
      () => assert.fail('the transaction cannot commit'),
      (err: unknown) => err,
    );
    assert.match((lost as Error).message, /the SQLite thread ended/);
    // A lost connection, retried by the ledger writer (which the restart then answers).
    assert.equal(classifyStoreError(lost), 'connection');

    assert.deepEqual(await watched.selectFrom('t').select('name').orderBy('id').execute(), [{ name: 'committed' }]);
    assert.equal(threads.length, 2);
    // The new thread writes: the old one's write lock went with it.
    await watched.insertInto('t').values({ id: 2, name: 'after the restart' }).execute();
    assert.deepEqual(await db.selectFrom('t').select('name').orderBy('id').execute(), [{ name: 'committed' }, { name: 'after the restart' }]);
    await watched.destroy();
    assert.equal(threads.length, 2, 'a store closed on purpose is not reopened');
  });

  it('the thread holds a process open only while a query is in flight, and not after the store is closed', async () => {
    await db.destroy();
    // A query in flight is answered before the process ends, although nothing else holds it open.
    const inFlight = await inProcess(path, 'sql`select 42 as n`.execute(db).then(({ rows }) => console.log(rows[0].n));');
    assert.equal(inFlight.stdout.trim(), '42');
    // Idle and never closed: the process ends by itself. Closed: the same.
    await inProcess(path, `await db.selectFrom('t').selectAll().execute(); console.log('idle');`);
    const closed = await inProcess(path, `await db.selectFrom('t').selectAll().execute(); await db.destroy(); console.log('closed');`);
    assert.equal(closed.stdout.trim(), 'closed');
    db = new Kysely<Db>({ dialect: new SqliteThreadDialect(path) });
  });
});
