import { CompiledQuery, type Expression, type ExpressionBuilder, type Kysely, type Selectable, type SqlBool, sql } from 'kysely';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import { addSpend } from './budget-spend.ts';
import type { Database, LedgerTable } from './database.ts';
import { InvalidLedgerQuery } from './invalid-ledger-query.ts';
import { engineOf } from './engine-of.ts';
import { attachContent, insertContent } from './ledger-content.ts';
import { addRollups } from './rollup-tables.ts';
import type { SpendCell } from './spend-cells.ts';
import { addSpendRollups, readSpend, type SpendDimension, type SpendFilter, type SpendPeriod } from './spend-tables.ts';
import { type LedgerSelect, type WriteOrder, writeOrderOf } from './write-order.ts';

export interface LedgerQuery {
  /** The model as the client named it (an alias, `provider/model`) or as the provider was asked. */
  model?: string;
  provider?: string;
  outcome?: LedgerRecord['outcome'];
  keyId?: string;
  /** Only this project's records (a project key's view of the request log). */
  projectId?: string;
  /** Only these projects' records (a project member's view; empty: none). */
  projectIds?: readonly string[];
  /** Inclusive lower / exclusive upper bound on createdAt (epoch ms). */
  since?: number;
  until?: number;
  limit?: number;
  /** Opaque cursor from a previous page (`next_cursor`). */
  cursor?: string;
}

export interface LedgerPage {
  data: LedgerRecord[];
  nextCursor: string | null;
  /**
   * Where the write order stood just before this page was read: `listInWriteOrder` after it
   * returns every record written since (and perhaps some of this page, which a follower skips).
   */
  followCursor: string;
}

/** Records in the order they were written (= the order their requests ended). */
export interface LedgerQueryInWriteOrder extends Omit<LedgerQuery, 'cursor'> {
  /** A `nextCursor` / `followCursor` from before; none: from the first record. */
  after?: string;
}

export interface WriteOrderPage {
  data: LedgerRecord[];
  /** Where to continue (never null: polling it later returns what was written meanwhile). */
  nextCursor: string;
  hasMore: boolean;
}

/**
 * Rows per INSERT: well under both engines' bound-parameter limits (27 columns). Larger
 * statements were no faster per row on node:sqlite, and each row count's SQL text is cached.
 */
const INSERT_CHUNK = 100;

/** Ids per lookup of storedIds: well under both engines' bound-parameter limits. */
const ID_CHUNK = 500;

/** The ledger's queries: one implementation over Kysely for node:sqlite and PostgreSQL alike. */
export class LedgerStore {
  private readonly db: Kysely<Database>;
  /** INSERT text per row count, compiled by Kysely for the engine's placeholders. */
  private readonly insertSql = new Map<number, string>();
  private readonly writeOrder: WriteOrder;

  constructor(db: Kysely<Database>) {
    this.db = db;
    this.writeOrder = writeOrderOf(db);
  }

  /**
   * Idempotent: a batch retried after an ambiguous failure does not duplicate rows, nor count
   * anything twice. One transaction writes the rows, then, for the rows it actually stored (a row
   * already there, from a retried batch or a journal replay, was counted when it was), their
   * budget spend, their content (ledger-content.ts) and their rollups (rollup-tables.ts): a row
   * and what it adds are written together or not at all. The rollups go last: their rows are
   * shared by every writer, so their locks are held for the shortest time.
   * The statement is compiled once per row count and only the values are bound per batch:
   * building Kysely's query tree for every batch cost ~4.5 us a row, as much as SQLite's
   * own insert (100k-row insert measurement on node:sqlite: ~11.5 -> ~7 us a row).
   */
  async insert(records: readonly LedgerRecord[]): Promise<void> {
    const now = Date.now();
    await this.db.transaction().execute(async (trx) => {
      const inserted = new Set<string>();
      for (let i = 0; i < records.length; i += INSERT_CHUNK) {
        for (const id of await this.insertRows(trx, records.slice(i, i + INSERT_CHUNK))) inserted.add(id);
      }
      // A request id twice in one batch is stored once, from its first record (the second
      // conflicts): deleting the id on the first match keeps the second from counting.
      const stored = records.filter((r) => inserted.delete(r.requestId));
      await addSpend(
        trx,
        stored.flatMap((r) => r.budgetSpend ?? []),
        now,
      );
      await insertContent(trx, stored);
      await addRollups(trx, stored, now);
      await addSpendRollups(trx, stored);
    });
  }

  /** The request ids the insert stored (none for a row already there). */
  private async insertRows(db: Kysely<Database>, rows: readonly LedgerRecord[]): Promise<string[]> {
    const params: unknown[] = [];
    for (const r of rows) for (const value of Object.values(toRow(r))) params.push(value ?? null);
    const result = await db.executeQuery<{ request_id: string }>(CompiledQuery.raw(this.insertSqlFor(rows.length), params));
    return result.rows.map((row) => row.request_id);
  }

  /** Every row binds all of toRow's columns, in toRow's order. */
  private insertSqlFor(count: number): string {
    let text = this.insertSql.get(count);
    if (text === undefined) {
      const { sql, parameters } = this.db
        .insertInto('ledger')
        .values(Array.from({ length: count }, () => LEDGER_PLACEHOLDER_ROW))
        // PostgreSQL's partitioned ledger is unique on (request_id, created_at) (its key must hold
        // the partition key); a record written twice has the same of both.
        .onConflict((oc) =>
          oc.columns(engineOf(this.db) === 'postgres' ? ['request_id', 'created_at'] : ['request_id']).doNothing(),
        )
        .returning('request_id')
        .compile();
      if (parameters.length !== count * LEDGER_COLUMNS) throw new Error('ledger insert: every column must be a bound parameter');
      text = sql;
      this.insertSql.set(count, text);
    }
    return text;
  }

  /** Which of these request ids have a row (a primary-key read per chunk of ids). */
  async storedIds(ids: readonly string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (let i = 0; i < ids.length; i += ID_CHUNK) {
      const rows = await this.db
        .selectFrom('ledger')
        .select('request_id')
        .where('request_id', 'in', ids.slice(i, i + ID_CHUNK))
        .execute();
      for (const row of rows) found.add(row.request_id);
    }
    return found;
  }

  async get(requestId: string): Promise<LedgerRecord | undefined> {
    const row = await this.db.selectFrom('ledger').selectAll().where('request_id', '=', requestId).executeTakeFirst();
    return row ? (await attachContent(this.db, [fromRow(row)]))[0] : undefined;
  }

  /**
   * Newest first (by created_at, then request_id), paginated by `cursor`. Each filter has an
   * index that starts with its column and goes on with created_at (migrations 0001-0014), so a
   * page reads about `limit` rows whatever it filters on.
   */
  async list(q: LedgerQuery): Promise<LedgerPage> {
    const limit = clampLimit(q.limit);
    const cursor = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
    // Taken before the page: a record written in between is in both, never in neither.
    const followCursor = await this.writeOrder.latest();
    const newestFirst = (model: ModelMatch | undefined) => {
      let query = filtered(this.db.selectFrom('ledger').selectAll(), { ...q, model: undefined });
      if (model) query = query.where(model);
      // A row comparison, not `created_at < x OR (created_at = x AND request_id < y)`: PostgreSQL
      // takes only the former as an index bound, and walked the index down to the cursor and
      // filtered (385 ms for a cursor halfway down a 1M-row ledger, under 1 ms now).
      if (cursor) {
        query = query.where((eb) =>
          eb(eb.refTuple('created_at', 'request_id'), '<', eb.tuple(cursor.createdAt, cursor.requestId)),
        );
      }
      return query
        .orderBy('created_at', 'desc')
        .orderBy('request_id', 'desc')
        .limit(limit + 1);
    };
    let rows: Selectable<LedgerTable>[];
    if (q.model) {
      // The model filter is an OR over three indexes: as one query both engines gather every
      // match and sort them (1.7 s for a model on 30% of a 1M-row SQLite ledger). Each way
      // alone reads its index in order; the page is the newest of the three short lists.
      const [first, ...rest] = modelMatches(q.model).map((match) =>
        this.db.selectFrom(newestFirst(match).as('by_model')).selectAll(),
      );
      let union = first;
      for (const next of rest) union = union.union(next);
      rows = await union
        .orderBy('created_at', 'desc')
        .orderBy('request_id', 'desc')
        .limit(limit + 1)
        .execute();
    } else {
      rows = await newestFirst(undefined).execute();
    }
    const page = await attachContent(this.db, rows.slice(0, limit).map(fromRow));
    const last = page.at(-1);
    return { data: page, nextCursor: rows.length > limit && last ? encodeCursor(last) : null, followCursor };
  }

  /** The spend rollups' cells (spend-tables.ts): what GET /v1/spend sums, never the ledger's rows. */
  spend(period: SpendPeriod, byTag: boolean, filter: SpendFilter, keep: readonly SpendDimension[]): Promise<SpendCell[]> {
    return readSpend(this.db, period, byTag, filter, keep);
  }

  /** Oldest first in the order records were written (their requests' end order), after `after`. */
  async listInWriteOrder(q: LedgerQueryInWriteOrder): Promise<WriteOrderPage> {
    const limit = clampLimit(q.limit);
    const from = q.after === undefined ? this.writeOrder.start : this.writeOrder.decode(q.after);
    const rows = await this.writeOrder.page((query) => filtered(query, q), from, limit + 1);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      data: await attachContent(
        this.db,
        page.map((r) => fromRow(r.row)),
      ),
      nextCursor: last ? this.writeOrder.encode(last.position) : (q.after ?? this.writeOrder.encode(from)),
      hasMore: rows.length > limit,
    };
  }
}

type ModelMatch = (eb: ExpressionBuilder<Database, 'ledger'>) => Expression<SqlBool>;

/** `model` matches what the client named, the provider-side model, or `provider/model`. */
function modelMatches(model: string): ModelMatch[] {
  const slash = model.indexOf('/');
  const matches: ModelMatch[] = [(eb) => eb('requested_model', '=', model), (eb) => eb('model', '=', model)];
  if (slash > 0) {
    // By the model's index, the provider checked on its rows: a provider-side model id belongs
    // to one provider or a few, a provider has many models. Without statistics SQLite took the
    // provider's index and read every row of the provider (120 ms for a 0.5% model on 1M rows
    // in write order); `|| ''` keeps that index out of the choice (PostgreSQL knows better anyway).
    matches.push((eb) =>
      eb.and([eb(sql<string>`provider || ''`, '=', model.slice(0, slash)), eb('model', '=', model.slice(slash + 1))]),
    );
  }
  return matches;
}

/** The filters both orders share. */
function filtered(query: LedgerSelect, q: Omit<LedgerQuery, 'cursor'>): LedgerSelect {
  const { model } = q;
  if (model) query = query.where((eb) => eb.or(modelMatches(model).map((match) => match(eb))));
  if (q.provider) query = query.where('provider', '=', q.provider);
  if (q.outcome) query = query.where('outcome', '=', q.outcome);
  if (q.keyId) query = query.where('key_id', '=', q.keyId);
  if (q.projectId) query = query.where('project_id', '=', q.projectId);
  if (q.projectIds) query = inProjects(query, q.projectIds);
  if (q.since !== undefined) query = query.where('created_at', '>=', q.since);
  if (q.until !== undefined) query = query.where('created_at', '<', q.until);
  return query;
}

/** One project is an equality, as the project index's plans expect; none matches nothing. */
function inProjects(query: LedgerSelect, projects: readonly string[]): LedgerSelect {
  if (projects.length === 0) return query.where(sql<SqlBool>`1 = 0`);
  return projects.length === 1 ? query.where('project_id', '=', projects[0]) : query.where('project_id', 'in', [...projects]);
}

function clampLimit(limit: number | undefined): number {
  return Math.min(Math.max(limit ?? 50, 1), 1000);
}

function encodeCursor(r: LedgerRecord): string {
  return Buffer.from(`${r.createdAt}:${r.requestId}`).toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: number; requestId: string } {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^(\d{1,16}):([^\0]+)$/.exec(text);
  if (!match || encodeCursorText(text) !== cursor || !Number.isSafeInteger(Number(match[1]))) {
    throw new InvalidLedgerQuery('cursor is not a next_cursor this log issued.', 'cursor');
  }
  return { createdAt: Number(match[1]), requestId: match[2] };
}

/** A count column that is null when the upstream did not report it (bigint reads back as a string on PostgreSQL). */
function nullableCount(value: number | string | null): number | null {
  return value === null ? null : Number(value);
}

/** Base64url decoding skips characters it does not know: only a cursor that re-encodes to itself is one we issued. */
function encodeCursorText(text: string): string {
  return Buffer.from(text).toString('base64url');
}

/** A row of nulls with toRow's keys in toRow's order: what the INSERT text is compiled from. */
const LEDGER_PLACEHOLDER_ROW = Object.fromEntries(
  Object.keys(toRow({} as LedgerRecord)).map((column) => [column, null]),
) as unknown as LedgerTable;
const LEDGER_COLUMNS = Object.keys(LEDGER_PLACEHOLDER_ROW).length;

function toRow(r: LedgerRecord): LedgerTable {
  return {
    request_id: r.requestId,
    created_at: r.createdAt,
    key_id: r.keyId,
    provider: r.provider,
    model: r.model,
    requested_model: r.requestedModel,
    surface: r.surface,
    streamed: r.streamed ? 1 : 0,
    input_tokens: r.inputTokens,
    cached_input_tokens: r.cachedInputTokens,
    cache_write_tokens: r.cacheWriteTokens,
    output_tokens: r.outputTokens,
    reasoning_tokens: r.reasoningTokens,
    audio_input_tokens: r.audioInputTokens ?? null,
    audio_output_tokens: r.audioOutputTokens ?? null,
    accepted_prediction_tokens: r.acceptedPredictionTokens ?? null,
    rejected_prediction_tokens: r.rejectedPredictionTokens ?? null,
    usage_source: r.usageSource,
    cost_usd: r.costUsd,
    price_known: r.priceKnown ? 1 : 0,
    ttft_ms: r.ttftMs,
    latency_ms: r.latencyMs,
    upstream_status: r.upstreamStatus,
    outcome: r.outcome,
    error_type: r.errorType,
    error_code: r.errorCode,
    error_message: r.errorMessage,
    finish_reason: r.finishReason,
    project_id: r.projectId,
    upstream_request_id: r.upstreamRequestId ?? null,
    upstream_error_type: r.upstreamErrorType ?? null,
    upstream_error_code: r.upstreamErrorCode ?? null,
    billing: r.billing ?? null,
    attempts: r.attempts ? JSON.stringify(r.attempts) : null,
    overhead_ms: r.overheadMs ?? null,
    tags: r.tags && r.tags.length > 0 ? JSON.stringify(r.tags) : null,
    ...laterColumns(r),
  };
}

/** The columns later migrations added (0022 on), which older records leave unset: null. */
function laterColumns(
  r: LedgerRecord,
): Pick<LedgerTable, 'bytes_in' | 'bytes_out' | 'response_cache' | 'cache_saved_usd' | 'provider_key' | 'dry_run'> {
  return {
    bytes_in: r.bytesIn ?? null,
    bytes_out: r.bytesOut ?? null,
    response_cache: r.responseCache ?? null,
    cache_saved_usd: r.cacheSavedUsd ?? null,
    provider_key: r.providerKey ?? null,
    dry_run: r.dryRun ? 1 : null,
  };
}

/** The record of a ledger row, without its content (attachContent adds it). */
function fromRow(row: Selectable<LedgerTable>): LedgerRecord {
  return {
    requestId: row.request_id,
    createdAt: Number(row.created_at),
    keyId: row.key_id,
    provider: row.provider,
    model: row.model,
    requestedModel: row.requested_model,
    surface: row.surface as LedgerRecord['surface'],
    streamed: Boolean(row.streamed),
    inputTokens: Number(row.input_tokens),
    cachedInputTokens: Number(row.cached_input_tokens),
    cacheWriteTokens: Number(row.cache_write_tokens),
    outputTokens: Number(row.output_tokens),
    reasoningTokens: Number(row.reasoning_tokens),
    audioInputTokens: nullableCount(row.audio_input_tokens),
    audioOutputTokens: nullableCount(row.audio_output_tokens),
    acceptedPredictionTokens: nullableCount(row.accepted_prediction_tokens),
    rejectedPredictionTokens: nullableCount(row.rejected_prediction_tokens),
    usageSource: row.usage_source as LedgerRecord['usageSource'],
    costUsd: Number(row.cost_usd),
    priceKnown: Boolean(row.price_known),
    ttftMs: row.ttft_ms === null ? null : Number(row.ttft_ms),
    latencyMs: Number(row.latency_ms),
    upstreamStatus: row.upstream_status === null ? null : Number(row.upstream_status),
    outcome: row.outcome as LedgerRecord['outcome'],
    errorType: row.error_type,
    errorCode: row.error_code,
    errorMessage: row.error_message,
    finishReason: row.finish_reason,
    prompt: null,
    completion: null,
    projectId: row.project_id,
    upstreamRequestId: row.upstream_request_id,
    upstreamErrorType: row.upstream_error_type,
    upstreamErrorCode: row.upstream_error_code,
    billing: row.billing as LedgerRecord['billing'],
    attempts: row.attempts ? (JSON.parse(row.attempts) as LedgerRecord['attempts']) : null,
    overheadMs: row.overhead_ms === null ? null : Number(row.overhead_ms),
    tags: row.tags ? (JSON.parse(row.tags) as string[]) : null,
    bytesIn: nullableCount(row.bytes_in),
    bytesOut: nullableCount(row.bytes_out),
    responseCache: row.response_cache as LedgerRecord['responseCache'],
    cacheSavedUsd: row.cache_saved_usd === null ? null : Number(row.cache_saved_usd),
    providerKey: row.provider_key,
    dryRun: row.dry_run === null ? null : Boolean(row.dry_run),
  };
}
