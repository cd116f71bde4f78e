// The embedded SQLite file's one connection, on a worker thread of its own (sqlite-thread-dialect.ts
// says why, and defines the messages: ThreadRequest in, ThreadResponse out).
//
// Written in the JavaScript subset of TypeScript (no type syntax) and importing only node:
// modules: the dialect starts it from its text as JavaScript, so the thread loads neither the
// gateway nor Node's TypeScript stripper (which would add ~12 MiB of RSS in a checkout, where
// sluice runs src/*.ts).
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';

if (!parentPort) throw new Error('sqlite-thread.ts runs as a worker thread');
const port = parentPort;

/**
 * node:sqlite's error as plain data (CarriedError): a thread's message would keep an Error's
 * message but not the codes classify-store-error.ts reads.
 */
function carry(err = new Error()) {
  const [code, errcode, errstr] = ['code', 'errcode', 'errstr'].map((key) => Reflect.get(err, key));
  return { name: err.name, message: err.message, code, errcode, errstr };
}

const db = (() => {
  try {
    const opened = new DatabaseSync(workerData.path);
    // The main thread's SQLITE_SETTINGS; busy_timeout's wait happens here, not on the event loop.
    opened.exec(workerData.settings);
    return opened;
  } catch (err) {
    // The main thread's open rejects with it; the thread ends, having nothing to serve.
    port.postMessage({ id: 0, error: carry(err instanceof Error ? err : new Error(String(err))) });
    port.close();
    return undefined;
  }
})();

if (db) {
  // Kysely prepares every query it runs; the ledger's batch inserts repeat the same few SQL
  // texts, whose compilation (a 500-row VALUES list) cost ~2.5 us per request in `npm run bench`.
  const statements = new Map();
  const prepare = (sql = '') => {
    let cached = statements.get(sql);
    if (!cached) {
      if (statements.size >= 64) statements.clear();
      const statement = db.prepare(sql);
      cached = { statement, reader: statement.columns().length > 0 };
      statements.set(sql, cached);
    }
    return cached;
  };
  port.postMessage({ id: 0, rows: [] });
  port.on('message', (request) => {
    if (request.close) {
      try {
        db.close();
      } finally {
        // Nothing left to serve: the thread ends, which the main thread awaits.
        port.close();
      }
      return;
    }
    const { id, sql, parameters } = request;
    let response;
    try {
      const { statement, reader } = prepare(sql);
      if (reader) response = { id, rows: statement.all(...parameters) };
      else {
        const { changes, lastInsertRowid } = statement.run(...parameters);
        response = { id, rows: [], changes, lastInsertRowid };
      }
    } catch (err) {
      response = { id, error: carry(err instanceof Error ? err : new Error(String(err))) };
    }
    port.postMessage(response);
  });
}
