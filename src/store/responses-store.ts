import type { Kysely } from 'kysely';
import type { ChatMessage } from '../protocol/openai-chat/request-schema.ts';
import type { Database } from './database.ts';

export interface StoredResponse {
  id: string;
  createdAt: number;
  model: string;
  conversation: ChatMessage[];
  response: Record<string, unknown>;
}

/**
 * Stored responses. A save runs after the stream ended, off the client's path; a continuation
 * that arrives before it finished waits for it instead of missing it.
 */
export class ResponsesStore {
  private readonly db: Kysely<Database>;
  private readonly pending = new Map<string, Promise<void>>();

  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  save(r: StoredResponse): Promise<void> {
    const write = this.db
      .insertInto('responses')
      .values({
        id: r.id,
        created_at: r.createdAt,
        model: r.model,
        conversation: JSON.stringify(r.conversation),
        response: JSON.stringify(r.response),
      })
      .onConflict((oc) => oc.column('id').doUpdateSet({ response: JSON.stringify(r.response) }))
      .execute()
      .then(() => undefined)
      .finally(() => this.pending.delete(r.id));
    this.pending.set(r.id, write);
    return write;
  }

  async get(id: string): Promise<StoredResponse | undefined> {
    await this.pending.get(id)?.catch(() => undefined);
    const row = await this.db.selectFrom('responses').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) return undefined;
    return {
      id: row.id,
      createdAt: Number(row.created_at),
      model: row.model,
      conversation: JSON.parse(row.conversation) as ChatMessage[],
      response: JSON.parse(row.response) as Record<string, unknown>,
    };
  }

  /** Resolves when every save in progress has finished (graceful shutdown). */
  async settle(): Promise<void> {
    await Promise.allSettled(this.pending.values());
  }
}
