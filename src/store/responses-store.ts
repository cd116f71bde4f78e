import type { Kysely } from 'kysely';
import type { CanonicalMessage } from '../protocol/canonical/request.ts';
import { askAgain } from './ask-again.ts';
import type { Database } from './database.ts';
import { storableId, storableText, TEXT_CAPS } from './sanitize-record.ts';

export interface StoredResponse {
  id: string;
  createdAt: number;
  model: string;
  /** The turns a continuation (previous_response_id) replays, as canonical messages. */
  conversation: CanonicalMessage[];
  response: Record<string, unknown>;
}

/**
 * Whose responses a handle on the store saves and reads: a project key's requests save under its
 * project and read only that project's responses (GET /v1/responses/{id}, previous_response_id);
 * the master key and admin keys read every project's.
 */
export interface ResponsesScope {
  projectId: string | null;
  readsAll: boolean;
}

const EVERY_PROJECT: ResponsesScope = { projectId: null, readsAll: true };

/** How long a lookup waits for a save another process may still be making. */
const UNSAVED_WAIT_MS = 500;

/**
 * Stored responses. A save runs after the stream ended, off the client's path; a continuation
 * that arrives before it finished waits for it instead of missing it.
 */
export class ResponsesStore {
  private readonly db: Kysely<Database>;
  private readonly scope: ResponsesScope;
  /** Shared by every scoped handle: a continuation waits for a save made through another one. */
  private readonly pending: Map<string, Promise<void>>;

  constructor(db: Kysely<Database>, scope: ResponsesScope = EVERY_PROJECT, pending = new Map<string, Promise<void>>()) {
    this.db = db;
    this.scope = scope;
    this.pending = pending;
  }

  /** The same store seen by one caller. */
  scoped(scope: ResponsesScope): ResponsesStore {
    return new ResponsesStore(this.db, scope, this.pending);
  }

  save(r: StoredResponse): Promise<void> {
    const write = this.db
      .insertInto('responses')
      .values({
        // The id and model come from the client or the upstream: PostgreSQL refuses a NUL in text
        // (22021) and a non-integer in a bigint. The JSON columns are safe: JSON.stringify
        // escapes NUL and lone surrogates.
        id: storableText(r.id, TEXT_CAPS.name),
        created_at: Number.isSafeInteger(r.createdAt) && r.createdAt >= 0 ? r.createdAt : 0,
        model: storableText(r.model, TEXT_CAPS.name),
        conversation: JSON.stringify(r.conversation),
        response: JSON.stringify(r.response),
        project_id: this.scope.projectId,
      })
      .onConflict((oc) => oc.column('id').doUpdateSet({ response: JSON.stringify(r.response) }))
      .execute()
      .then(() => undefined)
      .finally(() => this.pending.delete(r.id));
    this.pending.set(r.id, write);
    return write;
  }

  async get(id: string): Promise<StoredResponse | undefined> {
    // No row holds an id no column can hold (and PostgreSQL refuses a NUL in a parameter: a 500).
    if (!storableId(id)) return undefined;
    await this.pending.get(id)?.catch(() => undefined);
    let query = this.db.selectFrom('responses').selectAll().where('id', '=', id);
    if (!this.scope.readsAll) query = query.where('project_id', '=', this.scope.projectId);
    let row = await query.executeTakeFirst();
    // Read your writes across processes: the save runs after the response was sent, in the
    // process that served it, so a continuation that another worker or instance gets at once
    // can come first (measured: 49 of 300 immediate continuations on the other of two workers,
    // SQLite). A miss is asked again for a short while before it counts as not found.
    if (!row) await askAgain(UNSAVED_WAIT_MS, async () => (row = await query.executeTakeFirst()) !== undefined);
    if (!row) return undefined;
    return {
      id: row.id,
      createdAt: Number(row.created_at),
      model: row.model,
      conversation: readConversation(row.conversation),
      response: JSON.parse(row.response) as Record<string, unknown>,
    };
  }

  /** Resolves when every save in progress has finished (graceful shutdown). */
  async settle(): Promise<void> {
    await Promise.allSettled(this.pending.values());
  }
}

/**
 * A stored conversation. Rows written before the canonical request held chat messages, which are
 * canonical messages too except for the `developer` role: that one is read as the system message
 * it is, so a continuation of an old response sends what it sent then.
 */
function readConversation(json: string): CanonicalMessage[] {
  const messages = JSON.parse(json) as (CanonicalMessage | { role: 'developer'; content: string })[];
  return messages.map((m) => (m.role === 'developer' ? { ...m, role: 'system', developer: true } : m));
}
