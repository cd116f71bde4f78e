import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import type { Database } from '../../store/database.ts';
import { type ChangeChannel, type ChangeReceiver, type GovernanceChange, parseChange } from './governance-change.ts';

/**
 * NOTIFY channels are per database, not per schema: deployments sharing a database (in schemas of
 * their own) hear each other's NOTIFYs. Each names its schema (the pool's `current_schema()`),
 * and a listener acts only on its own: another deployment's changes would cost a store read
 * each, and made tests that share a database hear each other.
 */
const CHANNEL = 'sluice_governance';
/** Between two attempts to listen again: while nobody listens, a change takes up to auth.key_cache_ttl_s. */
const RETRY = { firstMs: 250, maxMs: 5_000 };

export interface PostgresChangeOptions {
  /** The store's URL: the listening connection is one of its own, outside the pool. */
  url: string;
  /** The store's pool, which sends the NOTIFYs. */
  db: Kysely<Database>;
  receiver: ChangeReceiver;
  log: (message: string) => void;
}

/**
 * Key and endpoint changes between the instances of one PostgreSQL store (README "Running several
 * instances"): each instance LISTENs on one connection of its own, and a change is a NOTIFY
 * through the pool, delivered to every listener within milliseconds. The connection is re-opened
 * when it drops; the instance then forgets what it cached, since changes may have gone by.
 */
export class PostgresChangeChannel implements ChangeChannel {
  private readonly options: PostgresChangeOptions;
  private client: pg.Client | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private attempts = 0;
  private closed = false;
  private down = false;
  /** The store's schema, as its pool sees it (the listening connection may come from listen_url). */
  private schema: string | undefined;

  constructor(options: PostgresChangeOptions) {
    this.options = options;
  }

  start(): void {
    void this.listen();
  }

  publish(change: GovernanceChange): void {
    sql`select pg_notify(${CHANNEL}, json_build_object('schema', current_schema(), 'change', ${JSON.stringify(change)}::json)::text)`
      .execute(this.options.db)
      .catch((err: Error) =>
        this.options.log(
          `governance: could not announce a change to the other instances (${err.message}); they see it within auth.key_cache_ttl_s`,
        ),
      );
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    if (client) await Promise.race([client.end().catch(() => {}), new Promise((r) => setTimeout(r, 1_000))]);
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.url, keepAlive: true, connectionTimeoutMillis: 5_000 });
    client.on('error', () => this.lost(client, 'connection error'));
    client.on('end', () => this.lost(client, 'connection closed'));
    client.on('notification', (message) => this.heard(message));
    try {
      this.schema ??= (await sql<{ schema: string }>`select current_schema() as schema`.execute(this.options.db)).rows[0]?.schema;
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (err) {
      client.end().catch(() => {});
      this.retry((err as Error).message);
      return;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.attempts = 0;
    if (this.down) this.options.log('governance: listening for key changes again');
    this.down = false;
    this.options.receiver.missed();
  }

  private heard(message: pg.Notification): void {
    if (message.channel !== CHANNEL || !message.payload) return;
    let change: GovernanceChange | undefined;
    try {
      const { schema, change: sent } = JSON.parse(message.payload) as { schema?: unknown; change?: unknown };
      if (schema !== this.schema) return;
      change = parseChange(sent);
    } catch {
      return;
    }
    if (change) this.options.receiver.changed(change);
  }

  private lost(client: pg.Client, why: string): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => {});
    this.retry(why);
  }

  private retry(why: string): void {
    if (this.closed || this.retryTimer) return;
    if (!this.down)
      this.options.log(
        `governance: not listening for key changes (${why}); until it listens again, other instances' changes take up to auth.key_cache_ttl_s`,
      );
    this.down = true;
    const delay = Math.min(RETRY.firstMs * 2 ** this.attempts++, RETRY.maxMs);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.listen();
    }, delay);
    this.retryTimer.unref();
  }
}
