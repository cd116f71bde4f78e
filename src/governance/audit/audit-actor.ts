import type { Caller } from '../../admission/admission.ts';

/**
 * Who did what the audit log records: the master key, a gateway-issued admin key (its id and
 * name), or nobody known (a failed sign-in). A new kind of actor (a signed-in user) is one more
 * member of `kind`, with its own id and name.
 */
export interface AuditActor {
  kind: 'master' | 'key' | 'anonymous';
  /** `master` for the master key, the key's id for a key; null when nobody is known. */
  id: string | null;
  /** A key's name, when it has one. */
  name: string | null;
}

export const ANONYMOUS: AuditActor = Object.freeze({ kind: 'anonymous', id: null, name: null });
const MASTER_ACTOR: AuditActor = Object.freeze({ kind: 'master', id: 'master', name: null });

/**
 * The actor a caller stands for; `keyName` reads a key's name (the caller carries its id only).
 * null: nobody known.
 */
export async function actorOf(
  caller: Pick<Caller, 'keyId'> | null,
  keyName: (keyId: string) => Promise<string | null>,
): Promise<AuditActor> {
  if (caller === null) return ANONYMOUS;
  if (caller.keyId === null) return MASTER_ACTOR;
  return { kind: 'key', id: caller.keyId, name: await keyName(caller.keyId) };
}
