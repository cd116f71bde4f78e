import type { Kysely } from 'kysely';
import type { BatchObjectsTable, Database } from './database.ts';
import { storableId } from './sanitize-record.ts';

export type BatchObjectKind = 'file' | 'batch' | 'message_batch';

/** A file or batch created through sluice, as the store keeps it. */
export interface BatchObject {
  id: string;
  kind: BatchObjectKind;
  provider: string;
  projectId: string | null;
  keyId: string | null;
  requestId: string;
  createdAt: number;
  /** The budget rules (JSON) at creation; null: none. */
  budgets: string | null;
  settledAt: number | null;
}

/** Ids per statement: well under either engine's limit on bound parameters. */
const CHUNK = 500;

/**
 * Which project, key and provider each upstream file and batch id belongs to (migration 0025), in
 * the shared store, so that every instance answers alike: every project reaches the upstream with
 * the operator's one key, so the upstream would serve another project's file as readily as the
 * caller's own. And the one settlement of a batch's usage across instances: `claimSettlement` is
 * a conditional UPDATE, which one instance wins.
 */
export class BatchObjectsStore {
  private readonly db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  /** Records an id (one already recorded keeps its owner: the first project it was handed to). */
  async record(object: Omit<BatchObject, 'settledAt' | 'createdAt'> & { createdAt?: number }): Promise<void> {
    if (!storableId(object.id)) return;
    await this.db
      .insertInto('batch_objects')
      .values({
        id: object.id,
        kind: object.kind,
        provider: object.provider,
        project_id: object.projectId,
        key_id: object.keyId,
        request_id: object.requestId,
        created_at: object.createdAt ?? Date.now(),
        budgets: object.budgets,
        settled_at: null,
        deleted_at: null,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
  }

  /** The object of this id and kind, not deleted; undefined when unknown. */
  async find(id: string, kind: BatchObjectKind): Promise<BatchObject | undefined> {
    if (!storableId(id)) return undefined;
    const row = await this.db
      .selectFrom('batch_objects')
      .selectAll()
      .where('id', '=', id)
      .where('kind', '=', kind)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return row && fromRow(row);
  }

  /** Those of `ids` (of this kind, not deleted) that belong to `projectId`. */
  async owned(ids: readonly string[], kind: BatchObjectKind, projectId: string | null): Promise<Set<string>> {
    const wanted = [...new Set(ids)].filter(storableId);
    const owned = new Set<string>();
    for (let i = 0; i < wanted.length; i += CHUNK) {
      const query = this.db
        .selectFrom('batch_objects')
        .select('id')
        .where('kind', '=', kind)
        .where('deleted_at', 'is', null)
        .where('id', 'in', wanted.slice(i, i + CHUNK));
      const rows = await (
        projectId === null ? query.where('project_id', 'is', null) : query.where('project_id', '=', projectId)
      ).execute();
      for (const row of rows) owned.add(row.id);
    }
    return owned;
  }

  /** The batches (both kinds) not settled yet, oldest first. */
  async unsettled(limit: number): Promise<BatchObject[]> {
    const rows = await this.db
      .selectFrom('batch_objects')
      .selectAll()
      .where('kind', 'in', ['batch', 'message_batch'])
      .where('settled_at', 'is', null)
      .where('deleted_at', 'is', null)
      .orderBy('created_at')
      .limit(limit)
      .execute();
    return rows.map(fromRow);
  }

  /**
   * Claims a batch's settlement: true for the one caller, on whichever instance, whose
   * conditional UPDATE found it unsettled; every other caller gets false and records nothing.
   */
  async claimSettlement(id: string, now = Date.now()): Promise<boolean> {
    const result = await this.db
      .updateTable('batch_objects')
      .set({ settled_at: now })
      .where('id', '=', id)
      .where('settled_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** A deleted file or message batch: gone for its project too (its settlement, if any, stands). */
  async markDeleted(id: string, now = Date.now()): Promise<void> {
    await this.db.updateTable('batch_objects').set({ deleted_at: now }).where('id', '=', id).execute();
  }
}

function fromRow(row: BatchObjectsTable): BatchObject {
  return {
    id: row.id,
    kind: row.kind as BatchObjectKind,
    provider: row.provider,
    projectId: row.project_id,
    keyId: row.key_id,
    requestId: row.request_id,
    createdAt: Number(row.created_at),
    budgets: row.budgets,
    settledAt: row.settled_at === null ? null : Number(row.settled_at),
  };
}
