import type { Kysely } from 'kysely';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { Database } from './database.ts';

/** Rows per INSERT of content: 4 values a row, well under both engines' bound-parameter limits. */
const CONTENT_CHUNK = 200;

/**
 * Stores the prompt and completion of the records that have any (ledger.store_content), in the
 * batch's transaction: a record's content is written with its row or not at all. Idempotent,
 * as the ledger's insert is.
 */
export async function insertContent(trx: Kysely<Database>, stored: readonly LedgerRecord[]): Promise<void> {
  const rows = stored
    .filter((r) => r.prompt !== null || r.completion !== null)
    .map((r) => ({ request_id: r.requestId, created_at: r.createdAt, prompt: r.prompt, completion: r.completion }));
  for (let i = 0; i < rows.length; i += CONTENT_CHUNK) {
    await trx
      .insertInto('ledger_content')
      .values(rows.slice(i, i + CONTENT_CHUNK))
      .onConflict((oc) => oc.columns(['request_id', 'created_at']).doNothing())
      .execute();
  }
}

/**
 * The records with their stored content (none once its retention dropped it), read in one query
 * bounded by the records' own created_at: on PostgreSQL it opens only the day partitions they
 * fall in.
 */
export async function attachContent(db: Kysely<Database>, records: LedgerRecord[]): Promise<LedgerRecord[]> {
  if (records.length === 0) return records;
  let first = Infinity;
  let last = -Infinity;
  for (const r of records) {
    first = Math.min(first, r.createdAt);
    last = Math.max(last, r.createdAt);
  }
  const rows = await db
    .selectFrom('ledger_content')
    .select(['request_id', 'created_at', 'prompt', 'completion'])
    .where('created_at', '>=', first)
    .where('created_at', '<=', last)
    .where(
      'request_id',
      'in',
      records.map((r) => r.requestId),
    )
    .execute();
  if (rows.length === 0) return records;
  const byId = new Map(rows.map((row) => [`${row.request_id}:${Number(row.created_at)}`, row]));
  return records.map((r) => {
    const content = byId.get(`${r.requestId}:${r.createdAt}`);
    return content ? { ...r, prompt: content.prompt, completion: content.completion } : r;
  });
}
