import type { Kysely } from 'kysely';
import { askAgain } from './ask-again.ts';
import type { Database } from './database.ts';
import { storableId } from './sanitize-record.ts';

/** How long a lookup waits for a record another process may still be making (as responses-store.ts). */
const UNSAVED_WAIT_MS = 500;
/** Ids per statement: well under either engine's limit on bound parameters. */
const CHUNK = 500;

/**
 * Which project each id an upstream's own Responses API handed out through the relay belongs to
 * (migration 0016), in the shared store: every instance answers alike. The first project an id
 * was handed to keeps it. A record is made while the response is relayed, off the client's
 * path; a lookup that arrives first (another worker or instance) waits for it a short while, as
 * a continuation waits for a stored response.
 */
export class RelayedIdsStore {
  private readonly db: Kysely<Database>;
  /** Records in progress in this process, by id: a lookup of one waits for it. */
  private readonly pending = new Map<string, Promise<void>>();

  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  /** Records `ids` as handed to `projectId` (an id already recorded keeps its project). */
  record(projectId: string, ids: readonly string[]): Promise<void> {
    const fresh = [...new Set(ids)].filter(storableId);
    if (fresh.length === 0) return Promise.resolve();
    const createdAt = Date.now();
    const write = Promise.all(
      chunks(fresh).map((chunk) =>
        this.db
          .insertInto('relayed_ids')
          .values(chunk.map((id) => ({ id, project_id: projectId, created_at: createdAt })))
          .onConflict((oc) => oc.column('id').doNothing())
          .execute(),
      ),
    )
      .then(() => undefined)
      .finally(() => {
        for (const id of fresh) if (this.pending.get(id) === write) this.pending.delete(id);
      });
    for (const id of fresh) this.pending.set(id, write);
    return write;
  }

  /**
   * Those of `ids` handed to `projectId`. An id not found is asked again for a short while before
   * it counts as another's or unknown, which take the same time: the wait tells nothing.
   */
  async owned(projectId: string, ids: readonly string[]): Promise<Set<string>> {
    // An id no column can hold was never recorded (and PostgreSQL refuses a NUL in a parameter).
    let missing = [...new Set(ids)].filter(storableId);
    const writes = new Set<Promise<void>>();
    for (const id of missing) {
      const write = this.pending.get(id);
      if (write) writes.add(write);
    }
    await Promise.allSettled(writes);
    const owned = new Set<string>();
    const ask = async () => {
      for (const id of await this.find(projectId, missing)) owned.add(id);
      missing = missing.filter((id) => !owned.has(id));
      return missing.length === 0;
    };
    if (missing.length > 0 && !(await ask())) await askAgain(UNSAVED_WAIT_MS, ask);
    return owned;
  }

  /** Resolves when every record in progress has finished (graceful shutdown). */
  async settle(): Promise<void> {
    await Promise.allSettled(this.pending.values());
  }

  private async find(projectId: string, ids: readonly string[]): Promise<string[]> {
    const found = await Promise.all(
      chunks(ids).map((chunk) =>
        this.db.selectFrom('relayed_ids').select('id').where('project_id', '=', projectId).where('id', 'in', chunk).execute(),
      ),
    );
    return found.flat().map((row) => row.id);
  }
}

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}
