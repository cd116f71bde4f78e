import type { Caller } from '../../admission/admission.ts';

/**
 * Who did what the audit log records: the master key, a gateway-issued admin key (its id and
 * name), a console user signed in through SSO (its id and name or email), or nobody known (a
 * failed sign-in).
 */
export interface AuditActor {
  kind: 'master' | 'key' | 'user' | 'anonymous';
  /** `master` for the master key, the key's or the user's id; null when nobody is known. */
  id: string | null;
  /** A key's name, a user's name (or email), when it has one. */
  name: string | null;
}

/** What an actor is read from: a caller, or a console session's holder (its `userId`). */
export interface ActorSource {
  keyId: string | null;
  userId?: string | null;
  user?: Pick<NonNullable<Caller['user']>, 'userId'>;
}

/** How an actor's name is found: the caller carries ids only. */
export interface ActorNames {
  key(keyId: string): Promise<string | null>;
  user(userId: string): Promise<string | null>;
}

export const ANONYMOUS: AuditActor = Object.freeze({ kind: 'anonymous', id: null, name: null });
const MASTER_ACTOR: AuditActor = Object.freeze({ kind: 'master', id: 'master', name: null });

/** The actor a caller (or a session) stands for; null: nobody known. */
export async function actorOf(source: ActorSource | null, names: ActorNames): Promise<AuditActor> {
  if (source === null) return ANONYMOUS;
  const userId = source.user?.userId ?? source.userId ?? null;
  if (userId !== null) return { kind: 'user', id: userId, name: await names.user(userId) };
  if (source.keyId === null) return MASTER_ACTOR;
  return { kind: 'key', id: source.keyId, name: await names.key(source.keyId) };
}
