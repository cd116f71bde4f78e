/**
 * A change to what every instance caches of the store (governance.ts): a key created, edited,
 * disabled, revoked, rotated or deleted; a project edited or deleted (what its keys and endpoints
 * stand for changes with it); an endpoint created, edited or deleted. It names what changed,
 * never its value: each instance forgets it and reads the store again on its next use.
 */
export type GovernanceChange =
  | { kind: 'key'; id: string }
  | { kind: 'project'; id: string }
  | { kind: 'endpoint'; project: string; name: string };

/** What hears of changes: an instance's governance (its caches). */
export interface ChangeReceiver {
  /** A change announced by an instance (this one included). */
  changed(change: GovernanceChange): void;
  /** Changes may have been missed (the channel was not listening): everything cached is read again. */
  missed(): void;
}

/** A way to tell the other instances, or the other workers of `serve --workers N`. */
export interface ChangeChannel {
  publish(change: GovernanceChange): void;
  close(): Promise<void>;
}

/** A change as it travels (NOTIFY payloads, IPC messages): anything else is ignored. */
export function parseChange(value: unknown): GovernanceChange | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const v = value as Record<string, unknown>;
  if ((v.kind === 'key' || v.kind === 'project') && typeof v.id === 'string') return { kind: v.kind, id: v.id };
  if (v.kind === 'endpoint' && typeof v.project === 'string' && typeof v.name === 'string')
    return { kind: 'endpoint', project: v.project, name: v.name };
  return undefined;
}
