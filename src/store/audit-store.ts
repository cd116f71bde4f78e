import type { Kysely, Selectable } from 'kysely';
import type { AuditLogTable, Database } from './database.ts';
import { InvalidLedgerQuery } from './invalid-ledger-query.ts';

/** One entry of the audit log as stored and read back (the changed fields already free of secrets). */
export interface AuditEntry {
  id: string;
  createdAt: number;
  actor: { kind: string; id: string | null; name: string | null };
  action: string;
  target: { type: string; id: string | null };
  /** The changed fields before and after: null before a creation, after a deletion, or when nothing is compared. */
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  requestId: string;
  clientAddress: string | null;
  /** What a failed attempt was refused with (a failed sign-in's error code). */
  errorCode: string | null;
}

export interface AuditQuery {
  /** The actor's id: `master`, a key id, ... */
  actor?: string;
  action?: string;
  targetType?: string;
  targetId?: string;
  /** Epoch ms: from (inclusive) and to (exclusive). */
  from?: number;
  to?: number;
  limit?: number;
  /** A `nextCursor` from the page before. */
  cursor?: string;
}

export interface AuditPage {
  data: AuditEntry[];
  nextCursor: string | null;
}

/**
 * The audit log in the store (migration 0018), on both engines: appended to by the admin API and
 * the console as they act, read newest first by keyset pages (created_at, id), pruned from the
 * oldest in bounded batches.
 */
export class AuditStore {
  private readonly db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async append(e: AuditEntry): Promise<void> {
    await this.db.insertInto('audit_log').values(toRow(e)).execute();
  }

  /** Newest first; each filter's index goes on with (created_at, id), so a page reads about `limit` rows. */
  async list(q: AuditQuery): Promise<AuditPage> {
    const limit = Math.min(Math.max(q.limit ?? 50, 1), 1000);
    const cursor = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
    let query = this.db.selectFrom('audit_log').selectAll();
    if (q.actor !== undefined) query = query.where('actor_id', '=', q.actor);
    if (q.action !== undefined) query = query.where('action', '=', q.action);
    if (q.targetType !== undefined) query = query.where('target_type', '=', q.targetType);
    if (q.targetId !== undefined) query = query.where('target_id', '=', q.targetId);
    if (q.from !== undefined) query = query.where('created_at', '>=', q.from);
    if (q.to !== undefined) query = query.where('created_at', '<', q.to);
    // A row comparison, which both engines take as an index bound (ledger-store.ts says why).
    if (cursor) query = query.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(cursor.createdAt, cursor.id)));
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    const data = rows.slice(0, limit).map(fromRow);
    const last = data.at(-1);
    return { data, nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
  }

  /** Deletes at most `batch` of the oldest entries created before `before` (epoch ms); returns how many. */
  async prune(before: number, batch: number): Promise<number> {
    const oldest = this.db
      .selectFrom('audit_log')
      .select('id')
      .where('created_at', '<', before)
      .orderBy('created_at')
      .orderBy('id')
      .limit(batch);
    const result = await this.db.deleteFrom('audit_log').where('id', 'in', oldest).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function toRow(e: AuditEntry): AuditLogTable {
  return {
    id: e.id,
    created_at: e.createdAt,
    actor_kind: e.actor.kind,
    actor_id: e.actor.id,
    actor_name: e.actor.name,
    action: e.action,
    target_type: e.target.type,
    target_id: e.target.id,
    before: e.before === null ? null : JSON.stringify(e.before),
    after: e.after === null ? null : JSON.stringify(e.after),
    request_id: e.requestId,
    client_address: e.clientAddress,
    error_code: e.errorCode,
  };
}

function fromRow(row: Selectable<AuditLogTable>): AuditEntry {
  return {
    id: row.id,
    createdAt: Number(row.created_at),
    actor: { kind: row.actor_kind, id: row.actor_id, name: row.actor_name },
    action: row.action,
    target: { type: row.target_type, id: row.target_id },
    before: row.before === null ? null : (JSON.parse(row.before) as Record<string, unknown>),
    after: row.after === null ? null : (JSON.parse(row.after) as Record<string, unknown>),
    requestId: row.request_id,
    clientAddress: row.client_address,
    errorCode: row.error_code,
  };
}

function encodeCursor(e: AuditEntry): string {
  return Buffer.from(`${e.createdAt}:${e.id}`).toString('base64url');
}

/** Only a cursor that re-encodes to itself is one this log issued (base64url decoding skips what it does not know). */
function decodeCursor(cursor: string): { createdAt: number; id: string } {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^(\d{1,16}):([^\0]+)$/.exec(text);
  if (!match || Buffer.from(text).toString('base64url') !== cursor || !Number.isSafeInteger(Number(match[1]))) {
    throw new InvalidLedgerQuery('cursor is not a next_cursor this log issued.', 'cursor');
  }
  return { createdAt: Number(match[1]), id: match[2] };
}
