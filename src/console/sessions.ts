import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Kysely } from 'kysely';
import { errors } from '../errors/catalog.ts';
import { refuseUnusable, type VerifiedKey } from '../governance/keys/authenticate.ts';
import type { TtlCache } from '../governance/keys/ttl-cache.ts';
import { type User, type UserDirectory, userCaller } from '../governance/users/users.ts';
import { type Authenticate, type Caller, MASTER } from '../admission/admission.ts';
import type { Database } from '../store/database.ts';

export const SESSION_COOKIE = 'sluice_console';

/** How long a console login lasts without use (sliding), and how often its use is written down. */
const IDLE_MS = 12 * 60 * 60 * 1000;
const TOUCH_EVERY_MS = 60_000;
/** Sessions kept when there is no store (the ledger is off). */
const MAX_MEMORY_SESSIONS = 1_000;

/**
 * Who a session stands for: a gateway-issued admin key (by id), the master key (by a salted
 * digest of it), or a user signed in through SSO (by id, with the ID token its provider's logout
 * asks for).
 */
export interface SessionHolder {
  keyId: string | null;
  masterDigest: string | null;
  userId: string | null;
  idToken: string | null;
  lastUsed: number;
}

/** Where sessions are kept, by the digest of their id (the id itself is only in the browser's cookie). */
export interface SessionRecords {
  put(idDigest: string, holder: SessionHolder): Promise<void>;
  get(idDigest: string): Promise<SessionHolder | undefined>;
  touch(idDigest: string, at: number): Promise<void>;
  remove(idDigest: string): Promise<void>;
}

/** How a session's key is looked up: the verified keys cache of governance, or the store itself. */
type KeyLookup = Pick<TtlCache<VerifiedKey>, 'get'>;

export interface SessionOptions {
  /** The verified keys cache of governance: a key session is re-checked (revoked, expired) on each use. */
  keys: KeyLookup;
  masterKey: string | undefined;
  /** The console's users: a user's session takes the role it has now, on each use. */
  users: Pick<UserDirectory, 'get'>;
  /** Where sessions are kept until a store is attached; default: this process's memory. */
  records?: SessionRecords;
  now?: () => number;
}

/**
 * The console's logins: the browser holds an opaque random id (an HttpOnly, SameSite=Strict
 * cookie); the gateway maps its digest to the caller, in the store (shared by every worker and
 * instance) or, with the ledger off, in memory. A session stands for the key that opened it and
 * is checked against it on each use: a revoked or expired key, or a changed master key, ends it.
 */
export class ConsoleSessions {
  private records: SessionRecords;
  private readonly options: SessionOptions;
  private readonly now: () => number;

  constructor(options: SessionOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
    this.records = options.records ?? new MemorySessionRecords();
  }

  /** The store is open: sessions are kept there from now on (the ones opened before it are lost). */
  attachStore(db: Kysely<Database>): void {
    this.records = new StoreSessionRecords(db);
  }

  /** A new session for an admin caller just authenticated by its key; returns its id. */
  async open(caller: Caller): Promise<string> {
    const id = randomBytes(32).toString('base64url');
    const idDigest = digest(id);
    const master = caller.keyId === null;
    await this.records.put(idDigest, {
      keyId: caller.keyId,
      masterDigest: master ? this.masterDigestOf(idDigest) : null,
      userId: null,
      idToken: null,
      lastUsed: this.now(),
    });
    return id;
  }

  /** A new session for a user just signed in through SSO; returns its id. */
  async openForUser(user: User, idToken: string): Promise<string> {
    const id = randomBytes(32).toString('base64url');
    await this.records.put(digest(id), { keyId: null, masterDigest: null, userId: user.id, idToken, lastUsed: this.now() });
    return id;
  }

  /** Ends the request's session; returns who it stood for (undefined: there was none), with a user's ID token for the provider's logout. */
  async close(req: IncomingMessage): Promise<SessionHolder | undefined> {
    const id = sessionIdOf(req);
    if (!id) return undefined;
    const holder = await this.records.get(digest(id));
    await this.records.remove(digest(id));
    return holder;
  }

  /** The caller of the request's live session; undefined without one; a 401 when its key no longer stands. */
  async callerOf(req: IncomingMessage, keys: KeyLookup = this.options.keys): Promise<Caller | undefined> {
    const id = sessionIdOf(req);
    if (!id) return undefined;
    const idDigest = digest(id);
    const holder = await this.records.get(idDigest);
    if (!holder) return undefined;
    const t = this.now();
    if (t - holder.lastUsed > IDLE_MS) {
      await this.records.remove(idDigest);
      return undefined;
    }
    const caller = await this.holderCaller(idDigest, holder, keys);
    if (t - holder.lastUsed > TOUCH_EVERY_MS) await this.records.touch(idDigest, t);
    return caller;
  }

  /**
   * Authentication that also takes a console session when the request presents no key itself:
   * the key path is unchanged (and stays synchronous for requests without the cookie). A
   * session's key is looked up in `keys` (the admin API's: the store itself, governance.ts).
   */
  wrap(authenticate: Authenticate, keys: KeyLookup = this.options.keys): Authenticate {
    return (req) => {
      if (req.headers.authorization !== undefined || req.headers['x-api-key'] !== undefined) return authenticate(req);
      if (!sessionIdOf(req)) return authenticate(req);
      return this.callerOf(req, keys).then((caller) => caller ?? authenticate(req));
    };
  }

  /** Salted with the session: the store holds no digest of the master key that two sessions share. */
  private masterDigestOf(idDigest: string): string {
    return digest(`${idDigest}:${this.options.masterKey ?? ''}`);
  }

  private async holderCaller(idDigest: string, holder: SessionHolder, keys: KeyLookup): Promise<Caller> {
    if (holder.userId !== null) {
      // Read on each use: a role an owner changed holds at once, in every instance.
      const user = await this.options.users.get(holder.userId);
      if (!user) throw errors.wrongKey();
      return userCaller(user);
    }
    if (holder.keyId === null) {
      // A master key changed since the login ends the session.
      if (holder.masterDigest !== this.masterDigestOf(idDigest)) throw errors.wrongKey();
      return MASTER;
    }
    const key = await keys.get(holder.keyId);
    if (!key || !key.caller.admin) throw errors.wrongKey();
    refuseUnusable(key, this.now());
    return key.caller;
  }
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}

function sessionIdOf(req: IncomingMessage): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

/** The cookie's attributes: never readable by scripts, never sent by another site's page. */
export function sessionCookie(id: string, secure: boolean): string {
  return `${SESSION_COOKIE}=${id}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

export function clearedCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}; Max-Age=0`;
}

/** Sessions of a gateway without a store: this process only, the oldest dropped past a bound. */
export class MemorySessionRecords implements SessionRecords {
  private readonly byDigest = new Map<string, SessionHolder>();

  async put(idDigest: string, holder: SessionHolder): Promise<void> {
    if (this.byDigest.size >= MAX_MEMORY_SESSIONS) this.byDigest.delete(this.byDigest.keys().next().value!);
    this.byDigest.set(idDigest, { ...holder });
  }
  async get(idDigest: string): Promise<SessionHolder | undefined> {
    const holder = this.byDigest.get(idDigest);
    return holder && { ...holder };
  }
  async touch(idDigest: string, at: number): Promise<void> {
    const holder = this.byDigest.get(idDigest);
    if (holder) holder.lastUsed = at;
  }
  async remove(idDigest: string): Promise<void> {
    this.byDigest.delete(idDigest);
  }
}

interface SessionsTable {
  id_digest: string;
  key_id: string | null;
  master_digest: string | null;
  user_id: string | null;
  id_token: string | null;
  last_used_at: number;
}
type SessionsDatabase = Database & { console_sessions: SessionsTable };

/** Sessions in the store (migration 0013): every worker and instance sharing it knows them. */
class StoreSessionRecords implements SessionRecords {
  private readonly db: Kysely<SessionsDatabase>;

  constructor(db: Kysely<Database>) {
    this.db = db as unknown as Kysely<SessionsDatabase>;
  }
  async put(idDigest: string, holder: SessionHolder): Promise<void> {
    await this.db
      .insertInto('console_sessions')
      .values({
        id_digest: idDigest,
        key_id: holder.keyId,
        master_digest: holder.masterDigest,
        user_id: holder.userId,
        id_token: holder.idToken,
        last_used_at: holder.lastUsed,
      })
      .execute();
  }
  async get(idDigest: string): Promise<SessionHolder | undefined> {
    const row = await this.db.selectFrom('console_sessions').selectAll().where('id_digest', '=', idDigest).executeTakeFirst();
    return (
      row && {
        keyId: row.key_id,
        masterDigest: row.master_digest,
        userId: row.user_id,
        idToken: row.id_token,
        lastUsed: Number(row.last_used_at),
      }
    );
  }
  async touch(idDigest: string, at: number): Promise<void> {
    await this.db.updateTable('console_sessions').set({ last_used_at: at }).where('id_digest', '=', idDigest).execute();
  }
  async remove(idDigest: string): Promise<void> {
    await this.db.deleteFrom('console_sessions').where('id_digest', '=', idDigest).execute();
  }
}
