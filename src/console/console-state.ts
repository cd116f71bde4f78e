import type { LedgerRecord } from '../accounting/ledger-record.ts';
import { LiveFeed } from './live-feed.ts';
import { MinuteRollups } from './minute-rollups.ts';
import { ConsoleSessions } from './sessions.ts';

/** What the console keeps in a gateway: its logins, the live log's watchers and the charts' rollups. */
export interface ConsoleState {
  sessions: ConsoleSessions;
  feed: LiveFeed;
  rollups: MinuteRollups;
  /** The ledger writer's listener: a stored batch feeds the rollups and the live log. */
  written(records: readonly LedgerRecord[]): void;
}

export function createConsoleState(): ConsoleState {
  const feed = new LiveFeed();
  const rollups = new MinuteRollups();
  return {
    sessions: new ConsoleSessions(),
    feed,
    rollups,
    written(records) {
      rollups.add(records);
      feed.publish(records);
    },
  };
}
