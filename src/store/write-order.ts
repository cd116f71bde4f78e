import { type Kysely, type RawBuilder, type Selectable, type SelectQueryBuilder, sql } from 'kysely';
import type { Database, LedgerTable } from './database.ts';
import { engineOf } from './engine-of.ts';
import { InvalidLedgerQuery } from './invalid-ledger-query.ts';

export type LedgerSelect = SelectQueryBuilder<Database, 'ledger', Selectable<LedgerTable>>;

/** A place in the write order: [rowid] on SQLite, [transaction id, sequence] on PostgreSQL. */
export type WritePosition = readonly number[];

/**
 * The order ledger rows were written in (migration 0003 says why each engine needs what it has),
 * with the opaque cursors `GET /v1/requests?order=asc&after=` takes.
 */
export interface WriteOrder {
  /** Before the first row. */
  readonly start: WritePosition;
  /** The position of the last row a reader may take now: every row written later comes after it. */
  latest(): Promise<string>;
  /** Up to `limit` rows after `after` that `filter` keeps (it adds the request log's filters to a select of ledger rows). */
  page(
    filter: (query: LedgerSelect) => LedgerSelect,
    after: WritePosition,
    limit: number,
  ): Promise<{ row: Selectable<LedgerTable>; position: WritePosition }[]>;
  encode(position: WritePosition): string;
  /** Throws InvalidLedgerQuery (param `after`) for anything this engine's encode did not produce. */
  decode(cursor: string): WritePosition;
}

/**
 * Rows of transactions older than every transaction still running: no row can commit later
 * with a smaller (txid, seq). A write transaction left open anywhere on the server holds the
 * reader back (never skips a row) until it ends.
 */
const settled = sql<boolean>`txid < txid_snapshot_xmin(txid_current_snapshot())`;

export function writeOrderOf(db: Kysely<Database>): WriteOrder {
  const postgres = engineOf(db) === 'postgres';
  const width = postgres ? 2 : 1;
  const encode = (position: WritePosition) => Buffer.from(`w:${position.join('.')}`).toString('base64url');
  return {
    start: postgres ? [0, 0] : [0],
    encode,
    decode(cursor) {
      const text = Buffer.from(cursor, 'base64url').toString('utf8');
      const match = /^w:(\d{1,16}(?:\.\d{1,16})*)$/.exec(text);
      const position = match ? match[1].split('.').map(Number) : [];
      if (position.length !== width || !position.every(Number.isSafeInteger) || encode(position) !== cursor) {
        throw new InvalidLedgerQuery('after is not a cursor this log issued (next_cursor or follow_cursor).', 'after');
      }
      return position;
    },
    async latest() {
      if (!postgres) {
        const { rows } = await sql<{ n: number | null }>`select max(rowid) as n from ledger`.execute(db);
        return encode([Number(rows[0]?.n ?? 0)]);
      }
      const { rows } = await sql<{ txid: number; seq: number }>`
        select txid, seq from ledger where ${settled} order by txid desc, seq desc limit 1`.execute(db);
      return encode(rows[0] ? [Number(rows[0].txid), Number(rows[0].seq)] : [0, 0]);
    },
    async page(filter, after, limit) {
      if (!postgres) return sqlitePage(db, filter, after[0], limit);
      const rows = await filter(db.selectFrom('ledger').selectAll())
        .select([sql<number>`txid`.as('write_txid'), sql<number>`seq`.as('write_seq')])
        .where(settled)
        .where(sql<boolean>`(txid, seq) > (${after[0]}, ${after[1]})`)
        .orderBy(sql`txid`)
        .orderBy(sql`seq`)
        .limit(limit)
        .execute();
      return rows.map((row) => ({ row, position: [Number(row.write_txid), Number(row.write_seq)] }));
    },
  };
}

/** Rows a SQLite page walks in rowid order before it asks the filters' indexes instead. */
const SQLITE_WINDOW = 10_000;

/** The columns the request log filters on: all the window reads of each row it walks. */
const FILTER_COLUMNS = ['created_at', 'key_id', 'project_id', 'provider', 'model', 'requested_model', 'outcome'] as const;

type Positioned = Selectable<LedgerTable> & { write_position: number };

/**
 * SQLite has no statistics here, so with a filter whose column is indexed (key, outcome, model...)
 * it always searches that index and sorts what it finds by rowid: for a common value (outcome=ok
 * on a 1M-row ledger) that is every ~1M index entry, ~110 ms, on each poll of a live log that
 * only needs the last few rows; walking the rowids finds them at once. For a rare value (one key
 * among thousands) the index is right and the walk would read the whole ledger. So: first the
 * next SQLITE_WINDOW rowids, walked in order (bounded work, enough for a follower and for any
 * common value); only if the page is not full by then, and rows lie beyond, the planner's index
 * over the rest (where the value is rare, so the sort is small). Both pick rowids first, from
 * the filter columns only (the window) or the index alone, and read the page's rows after.
 */
async function sqlitePage(
  db: Kysely<Database>,
  filter: (query: LedgerSelect) => LedgerSelect,
  after: number,
  limit: number,
): Promise<{ row: Selectable<LedgerTable>; position: WritePosition }[]> {
  const windowEnd = after + SQLITE_WINDOW;
  // Read first: every rowid up to it is written, and later rows get larger ones, so when the
  // ledger reaches past the window the window is complete, and no row written while this page is
  // read can land in the window after it was read (a row the second query's start would skip).
  const { rows: newest } = await sql<{ n: number | null }>`select max(rowid) as n from ledger`.execute(db);
  const beyond = Number(newest[0]?.n ?? 0) > windowEnd;
  // The LIMIT keeps SQLite from flattening the subquery into the outer one (where it would pick
  // the filter's index again): the window is then read as a co-routine, in rowid order.
  const window = db
    .selectFrom('ledger')
    .select([...FILTER_COLUMNS, sql<number>`rowid`.as('write_position')])
    .where(sql<boolean>`rowid > ${after} and rowid <= ${windowEnd}`)
    .orderBy(sql`rowid`)
    .limit(SQLITE_WINDOW)
    .as('ledger');
  /** The rowids of the next `n` rows `filter` keeps, by their `position` column. */
  const positions = (source: LedgerSelect, position: RawBuilder<number>, n: number) =>
    filter(source).clearSelect().select(position.as('write_position')).orderBy(position).limit(n);
  const rowsAt = async (ids: ReturnType<typeof positions>) =>
    (await db
      .selectFrom('ledger')
      .selectAll()
      .select(sql<number>`rowid`.as('write_position'))
      .where(sql<boolean>`rowid in (${ids})`)
      .orderBy(sql`rowid`)
      .execute()) as Positioned[];
  const rows = await rowsAt(positions(db.selectFrom(window).selectAll() as unknown as LedgerSelect, sql`write_position`, limit));
  if (rows.length < limit && beyond) {
    const rest = db
      .selectFrom('ledger')
      .selectAll()
      .where(sql<boolean>`ledger.rowid > ${windowEnd}`);
    rows.push(...(await rowsAt(positions(rest, sql`ledger.rowid`, limit - rows.length))));
  }
  return rows.map(({ write_position, ...row }) => ({ row, position: [Number(write_position)] }));
}
