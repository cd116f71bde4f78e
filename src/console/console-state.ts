import type { Kysely } from 'kysely';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { Database } from '../store/database.ts';
import { LiveFeed } from './live-feed.ts';
import { type MinuteCell, summarize } from './minute-rollups.ts';
import { RollupStore } from './rollup-store.ts';
import { ConsoleSessions, type SessionOptions } from './sessions.ts';

/** What the console keeps in a gateway: its logins, the live log's watchers and the charts' rollups. */
export interface ConsoleState {
  sessions: ConsoleSessions;
  feed: LiveFeed;
  /** The rollups from `since` (epoch ms); undefined while the store is not open (or the ledger is off). */
  rollupsSince: (since: number) => Promise<MinuteCell[]> | undefined;
  /** The store is open: rollups are added to it, and sessions kept in it, from now on. */
  attachStore: (db: Kysely<Database>) => void;
  /** The ledger writer's listener: a stored batch is added to the rollups. */
  written: (records: readonly LedgerRecord[]) => void;
}

export function createConsoleState(log: (message: string) => void, sessionOptions: SessionOptions): ConsoleState {
  const feed = new LiveFeed();
  const sessions = new ConsoleSessions(sessionOptions);
  let rollups: RollupStore | undefined;
  return {
    sessions,
    feed,
    rollupsSince: (since) => rollups?.since(since),
    attachStore: (db) => {
      rollups = new RollupStore(db);
      sessions.attachStore(db);
    },
    written: (records) => {
      // After the batch's own transaction: a failure here leaves the charts short, never the ledger.
      rollups
        ?.add(summarize(records))
        .catch((err: unknown) => log(`console rollups: a batch's sums were not stored: ${(err as Error).message}`));
    },
  };
}
