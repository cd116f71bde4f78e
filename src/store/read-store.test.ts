import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configSchema } from '../config/schema.ts';
import { errors } from '../errors/catalog.ts';
import type { LedgerStore } from './ledger-store.ts';
import { openLedgerStore, readStore, type StoreReader } from './read-store.ts';

function contextWith(config: Record<string, unknown>, ledgerStore?: LedgerStore): StoreReader {
  return { config: configSchema.parse(config), ledgerStore };
}

const code = (err: unknown) => (err as { code?: string }).code;

describe('readStore', () => {
  const ctx = contextWith({ store: { query_timeout_ms: 50 } });

  it('a connection failure is a 503 store_unavailable', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    await assert.rejects(readStore(ctx, Promise.reject(refused)), (err) => code(err) === 'store_unavailable');
  });

  it('a read not answered within the query timeout is a 503 store_unavailable, at the timeout', async () => {
    const start = Date.now();
    await assert.rejects(readStore(ctx, new Promise(() => {})), /did not answer within 50 ms/);
    assert.ok(Date.now() - start < 1000);
  });

  it('other errors go on as they are: a client error stays a 400, a bug stays a bug', async () => {
    await assert.rejects(readStore(ctx, Promise.reject(errors.invalidRequest('bad', 'limit'))), (err) => code(err) === 'invalid_request');
    await assert.rejects(readStore(ctx, Promise.reject(new Error('a bug'))), /a bug/);
  });

  it('a read that answers is returned', async () => {
    assert.equal(await readStore(ctx, Promise.resolve(42)), 42);
  });
});

describe('openLedgerStore', () => {
  it('says disabled only when the ledger is off, and unavailable while the store is not open', () => {
    assert.throws(() => openLedgerStore(contextWith({ ledger: { enabled: false } })), /disabled \(ledger\.enabled: false\)/);
    assert.throws(
      () => openLedgerStore(contextWith({})),
      (err) => code(err) === 'store_unavailable' && (err as { status: number }).status === 503,
    );
    const store = {} as LedgerStore;
    assert.equal(openLedgerStore(contextWith({}, store)), store);
  });
});
