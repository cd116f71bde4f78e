import type { Kysely } from 'kysely';
import type { Database } from '../store/database.ts';
import type { RollupCell } from '../store/rollup-cells.ts';
import { readRollups, type RollupPeriod } from '../store/rollup-tables.ts';
import { LiveFeed } from './live-feed.ts';
import { ConsoleSessions, type SessionOptions } from './sessions.ts';

/** What the console keeps in a gateway: its logins, the live log's watchers and where the charts read. */
export interface ConsoleState {
  sessions: ConsoleSessions;
  feed: LiveFeed;
  /**
   * The per-minute or per-hour rollups from `since` (epoch ms), which the ledger store writes
   * with each batch; undefined while the store is not open (or the ledger is off).
   */
  rollupsSince: (period: RollupPeriod, since: number) => Promise<RollupCell[]> | undefined;
  /** The store is open: rollups are read from it, and sessions kept in it, from now on. */
  attachStore: (db: Kysely<Database>) => void;
}

export function createConsoleState(sessionOptions: SessionOptions): ConsoleState {
  const feed = new LiveFeed();
  const sessions = new ConsoleSessions(sessionOptions);
  let store: Kysely<Database> | undefined;
  return {
    sessions,
    feed,
    rollupsSince: (period, since) => (store ? readRollups(store, period, since) : undefined),
    attachStore: (db) => {
      store = db;
      sessions.attachStore(db);
    },
  };
}
