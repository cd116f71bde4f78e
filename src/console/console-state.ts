import type { Kysely } from 'kysely';
import type { SsoConfig } from '../config/sso-schema.ts';
import { UserDirectory } from '../governance/users/users.ts';
import type { Database } from '../store/database.ts';
import { readCharts, type RollupPeriod } from '../store/rollup-tables.ts';
import { LiveFeed } from './live-feed.ts';
import { ConsoleSessions, type SessionOptions } from './sessions.ts';
import { SsoClient } from './sso.ts';

/** What the console keeps in a gateway: its logins, its users, the live log's watchers and where the charts read. */
export interface ConsoleState {
  sessions: ConsoleSessions;
  /** The users signed in through SSO (kept in the store). */
  users: UserDirectory;
  /** Sign-in with OpenID Connect, when `auth.sso` is configured. */
  sso: SsoClient | undefined;
  feed: LiveFeed;
  /**
   * The per-minute or per-hour rollups from `since` (epoch ms), which the ledger store writes
   * with each batch, of every project or of `projects` only; undefined while the store is not
   * open (or the ledger is off).
   */
  chartsSince: (period: RollupPeriod, since: number, projects?: readonly string[]) => ReturnType<typeof readCharts> | undefined;
  /** The store is open: rollups are read from it, and sessions and users kept in it, from now on. */
  attachStore: (db: Kysely<Database>) => void;
}

export function createConsoleState(sessionOptions: Omit<SessionOptions, 'users'>, sso?: SsoConfig): ConsoleState {
  const feed = new LiveFeed();
  const users = new UserDirectory();
  const sessions = new ConsoleSessions({ ...sessionOptions, users });
  let store: Kysely<Database> | undefined;
  return {
    sessions,
    users,
    sso: sso && new SsoClient(sso),
    feed,
    chartsSince: (period, since, projects) => (store ? readCharts(store, period, since, projects) : undefined),
    attachStore: (db) => {
      store = db;
      sessions.attachStore(db);
      users.attach(db);
    },
  };
}
