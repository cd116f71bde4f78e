import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyStoreError, describeStoreError } from './classify-store-error.ts';

const coded = (message: string, code: string, extra: Record<string, unknown> = {}) => Object.assign(new Error(message), { code, ...extra });

describe('classifyStoreError', () => {
  it('one bad record does not stop the ledger: PostgreSQL data errors are data, its other classes are the database', () => {
    assert.equal(classifyStoreError(coded('invalid byte sequence for encoding "UTF8": 0x00', '22021')), 'data');
    assert.equal(classifyStoreError(coded('invalid input syntax for type bigint: "1.5"', '22P02')), 'data');
    assert.equal(classifyStoreError(coded('value "1e+308" is out of range for type bigint', '22003')), 'data');
    assert.equal(classifyStoreError(coded('null value in column violates not-null constraint', '23502')), 'data');
    assert.equal(classifyStoreError(coded('the database system is shutting down', '57P03')), 'connection');
    assert.equal(classifyStoreError(coded('too many connections', '53300')), 'connection');
    assert.equal(classifyStoreError(coded('relation "ledger" does not exist', '42P01')), 'connection');
  });

  it('one bad record does not stop the ledger: SQLite constraint and binding errors are data, a busy file is not', () => {
    assert.equal(classifyStoreError(coded('NOT NULL constraint failed', 'ERR_SQLITE_ERROR', { errcode: 1299 })), 'data');
    assert.equal(classifyStoreError(coded('datatype mismatch', 'ERR_SQLITE_ERROR', { errcode: 20 })), 'data');
    assert.equal(classifyStoreError(coded('database is locked', 'ERR_SQLITE_ERROR', { errcode: 5 })), 'connection');
    assert.equal(classifyStoreError(coded('disk I/O error', 'ERR_SQLITE_ERROR', { errcode: 266 })), 'connection');
    const bind = Object.assign(new TypeError('Provided value cannot be bound to SQLite parameter 9.'), { code: 'ERR_INVALID_ARG_TYPE' });
    assert.equal(classifyStoreError(bind), 'data');
  });

  it('socket errors and pg timeouts are connection failures', () => {
    assert.equal(classifyStoreError(coded('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')), 'connection');
    assert.equal(classifyStoreError(new AggregateError([coded('refused', 'ECONNREFUSED')], '')), 'connection');
    assert.equal(classifyStoreError(new Error('Query read timeout')), 'connection');
    assert.equal(classifyStoreError(new Error('Connection terminated unexpectedly')), 'connection');
    assert.equal(classifyStoreError(new Error('timeout exceeded when trying to connect')), 'connection');
    assert.equal(classifyStoreError(new Error('something new')), 'unknown');
    assert.equal(classifyStoreError('a string'), 'unknown');
  });

  it('describes an error by its code and message, once', () => {
    assert.equal(describeStoreError(coded('invalid byte sequence', '22021')), '22021: invalid byte sequence');
    assert.equal(describeStoreError(coded('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED')), 'connect ECONNREFUSED 127.0.0.1:1');
    assert.equal(describeStoreError(new AggregateError([coded('connect ECONNREFUSED ::1:1', 'ECONNREFUSED')], '')), 'connect ECONNREFUSED ::1:1');
  });
});
