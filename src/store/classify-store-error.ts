import { THREAD_ENDED } from './sqlite-thread-dialect.ts';

/**
 * Why a write failed, which decides what the ledger writer does next:
 * - `data`: the database refused a value in the batch. Retrying the same batch would fail forever
 *   and block every row behind it, so the batch is split to find the row(s) at fault.
 * - `connection`: the database could not be reached or did not answer (refused, reset, timed
 *   out, shutting down, out of resources). The batch is fine: retry it, with backoff.
 * - `unknown`: neither is certain. Retried like a connection failure at first; if it persists the
 *   batch is split as for `data` (the writer decides how long "persists" is).
 */
export type StoreErrorKind = 'data' | 'connection' | 'unknown';

/**
 * PostgreSQL SQLSTATE classes that are about the values sent
 * (https://www.postgresql.org/docs/current/errcodes-appendix.html): 22 data exception (22021 a NUL
 * in text, 22P02 "1.5" for a bigint, 22003 out of range), 23 integrity constraint violation, 54
 * program limit exceeded (a row too big). Other classes (08 connection, 53 resources, 57 operator
 * intervention, 40 rollbacks, 42 a missing table or privilege, XX internal) are about the database,
 * which an operator can fix: the rows wait for it.
 */
const PG_DATA_CLASSES = new Set(['22', '23', '54']);

/**
 * SQLite primary result codes (https://sqlite.org/rescode.html) that are about the values:
 * SQLITE_TOOBIG 18, SQLITE_CONSTRAINT 19, SQLITE_MISMATCH 20, SQLITE_RANGE 25. node:sqlite puts
 * the extended code in `errcode`; its low byte is the primary one. BUSY, LOCKED, IOERR, FULL,
 * CANTOPEN and the rest are about the file or the disk.
 */
const SQLITE_DATA_CODES = new Set([18, 19, 20, 25]);

/** Node socket errors and timeouts: the database is unreachable, not the data wrong. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EADDRNOTAVAIL',
]);

/**
 * pg raises these as plain Errors without a code: a cut or stalled connection
 * (node_modules/pg/lib/client.js, pg-pool/index.js).
 */
const PG_CONNECTION_MESSAGES = [
  'Connection terminated',
  'Query read timeout',
  'timeout exceeded when trying to connect',
  'timeout expired',
  'Client has encountered a connection error',
  'Connection ended',
  'Cannot use a pool after calling end',
];

export function classifyStoreError(err: unknown): StoreErrorKind {
  if (!(err instanceof Error)) return 'unknown';
  const { code, errcode } = err as Error & { code?: unknown; errcode?: unknown };
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code) || code === THREAD_ENDED) return 'connection';
    // A SQLSTATE is five characters, digits and upper-case letters.
    if (/^[0-9A-Z]{5}$/.test(code)) return PG_DATA_CLASSES.has(code.slice(0, 2)) ? 'data' : 'connection';
    if (code === 'ERR_SQLITE_ERROR' && typeof errcode === 'number') {
      return SQLITE_DATA_CODES.has(errcode & 0xff) ? 'data' : 'connection';
    }
    // node:sqlite refusing to bind a value (an array, an object, a BigInt out of range).
    if (code === 'ERR_INVALID_ARG_TYPE' || code === 'ERR_OUT_OF_RANGE') return 'data';
  }
  if (err instanceof AggregateError && err.errors.length > 0) return classifyStoreError(err.errors[0]);
  if (PG_CONNECTION_MESSAGES.some((m) => err.message.includes(m))) return 'connection';
  // pg serializing a parameter it cannot (a circular object, a BigInt mix-up) throws a TypeError.
  if (err instanceof TypeError || err instanceof RangeError) return 'data';
  return 'unknown';
}

/** One line for a log: the error's code when it has one, then its message. */
export function describeStoreError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as Error & { code?: unknown }).code;
  const message = err.message || (err instanceof AggregateError ? err.errors.map((e) => describeStoreError(e)).join('; ') : '');
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
}
