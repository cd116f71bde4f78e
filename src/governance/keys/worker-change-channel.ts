import { type ChangeChannel, type ChangeReceiver, type GovernanceChange, parseChange } from './governance-change.ts';

/** The message a worker sends the supervisor of `serve --workers N`, which passes it to the other workers. */
export interface GovernanceChangeMessage {
  sluice: 'governance-change';
  change: GovernanceChange;
}

export function isGovernanceChangeMessage(message: unknown): message is GovernanceChangeMessage {
  return (message as Partial<GovernanceChangeMessage> | null)?.sluice === 'governance-change';
}

/** The IPC channel to the supervisor (`process` in a cluster worker). */
export interface SupervisorLink {
  send(message: GovernanceChangeMessage): void;
  on(event: 'message', listener: (message: unknown) => void): void;
}

/**
 * Key and endpoint changes between the workers of one machine (cli/workers.ts relays them): the
 * workers of an embedded SQLite store have no other way to hear of one, and each has a cache of
 * its own. Within a second like PostgreSQL's, in practice within milliseconds.
 */
export class WorkerChangeChannel implements ChangeChannel {
  private readonly supervisor: SupervisorLink;

  constructor(supervisor: SupervisorLink, receiver: ChangeReceiver) {
    this.supervisor = supervisor;
    supervisor.on('message', (message) => {
      if (!isGovernanceChangeMessage(message)) return;
      const change = parseChange(message.change);
      if (change) receiver.changed(change);
    });
  }

  publish(change: GovernanceChange): void {
    try {
      this.supervisor.send({ sluice: 'governance-change', change });
    } catch {
      // The supervisor is gone (the worker is stopping): nobody is left to tell.
    }
  }

  async close(): Promise<void> {}
}
