import { type Kysely, type Selectable, type SelectQueryBuilder, sql } from 'kysely';
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
  page(
    query: LedgerSelect,
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
    async page(query, after, limit) {
      if (!postgres) {
        const rows = await query
          .select(sql<number>`ledger.rowid`.as('write_position'))
          .where(sql<boolean>`ledger.rowid > ${after[0]}`)
          .orderBy(sql`ledger.rowid`)
          .limit(limit)
          .execute();
        return rows.map((row) => ({ row, position: [Number(row.write_position)] }));
      }
      const rows = await query
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
