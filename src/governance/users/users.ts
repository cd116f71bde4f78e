import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Caller, Role } from '../../admission/admission.ts';
import { errors } from '../../errors/catalog.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { Database } from '../../store/database.ts';
import type { MappedAccess } from './claims-mapping.ts';

/** A console user: who the identity provider says they are, and what they may do here. */
export interface User {
  id: string;
  issuer: string;
  subject: string;
  email: string | null;
  name: string | null;
  role: Role;
  /** A member's projects; empty for the other roles. */
  projects: string[];
  /** `claims`: each sign-in sets the role from the claim mapping; `owner`: an owner set it, and it stays. */
  rolesFrom: 'claims' | 'owner';
  createdAt: number;
  lastSignInAt: number | null;
}

/** Who signed in, as the identity provider's ID token says. */
export interface Identity {
  issuer: string;
  subject: string;
  email: string | null;
  name: string | null;
}

interface UsersTable {
  id: string;
  issuer: string;
  subject: string;
  email: string | null;
  name: string | null;
  role: string;
  projects: string;
  roles_from: string;
  created_at: number;
  last_sign_in_at: number | null;
}
type UsersDatabase = Database & { users: UsersTable };

/**
 * The console's users, in the store (migration 0019): created just in time at a first sign-in,
 * their role set by the claim mapping at each sign-in until an owner sets it (PATCH-like POST
 * /admin/users/{id}). Without a store there are no users: a 503 like the keys'.
 */
export class UserDirectory {
  private db: Kysely<UsersDatabase> | undefined;

  attach(db: Kysely<Database>): void {
    this.db = db as unknown as Kysely<UsersDatabase>;
  }

  /**
   * The user signing in, created or brought up to date; undefined when the claims grant nothing
   * (a user whose role the claims set loses it when the provider stops granting it).
   */
  signIn(identity: Identity, mapped: MappedAccess | undefined, now: number): Promise<User | undefined> {
    return this.work(async (db) => {
      let user = await this.find(db, identity);
      if (!user) {
        if (!mapped) return undefined;
        const row = { id: `usr_${randomBytes(12).toString('base64url')}`, ...fresh(identity, mapped, now) };
        // Two first sign-ins at once: the second finds the first's row.
        await db
          .insertInto('users')
          .values(row)
          .onConflict((c) => c.columns(['issuer', 'subject']).doNothing())
          .execute();
        user = await this.find(db, identity);
        if (!user) throw errors.keyStoreUnavailable();
      }
      if (user.rolesFrom === 'claims' && !mapped) return undefined;
      const access = user.rolesFrom === 'claims' && mapped ? mapped : { role: user.role, projects: user.projects };
      await db
        .updateTable('users')
        .set({
          email: identity.email,
          name: identity.name,
          role: access.role,
          projects: JSON.stringify(access.projects),
          last_sign_in_at: now,
        })
        .where('id', '=', user.id)
        .execute();
      return { ...user, ...identity, ...access, lastSignInAt: now };
    });
  }

  get(id: string): Promise<User | undefined> {
    return this.work(async (db) => {
      const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
      return row && userOf(row);
    });
  }

  list(): Promise<User[]> {
    return this.work(async (db) => (await db.selectFrom('users').selectAll().orderBy('created_at').execute()).map(userOf));
  }

  /** An owner's choice: the role (and a member's projects) stay as set, whatever the claims say later. */
  setAccess(id: string, access: MappedAccess): Promise<User> {
    return this.work(async (db) => {
      const projects = access.role === 'member' ? access.projects : [];
      const result = await db
        .updateTable('users')
        .set({ role: access.role, projects: JSON.stringify(projects), roles_from: 'owner' })
        .where('id', '=', id)
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) throw errors.notFound('user', id, 'user_id');
      const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      return userOf(row);
    });
  }

  private async find(db: Kysely<UsersDatabase>, identity: Identity): Promise<User | undefined> {
    const row = await db
      .selectFrom('users')
      .selectAll()
      .where('issuer', '=', identity.issuer)
      .where('subject', '=', identity.subject)
      .executeTakeFirst();
    return row && userOf(row);
  }

  /** A store failure is the client's 503, never a 500 with the driver's text. */
  private async work<T>(task: (db: Kysely<UsersDatabase>) => Promise<T>): Promise<T> {
    if (!this.db) throw errors.keyStoreUnavailable();
    try {
      return await task(this.db);
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      throw errors.keyStoreUnavailable();
    }
  }
}

function fresh(identity: Identity, mapped: MappedAccess, now: number): Omit<UsersTable, 'id'> {
  return {
    issuer: identity.issuer,
    subject: identity.subject,
    email: identity.email,
    name: identity.name,
    role: mapped.role,
    projects: JSON.stringify(mapped.projects),
    roles_from: 'claims',
    created_at: now,
    last_sign_in_at: null,
  };
}

function userOf(row: UsersTable): User {
  return {
    id: row.id,
    issuer: row.issuer,
    subject: row.subject,
    email: row.email,
    name: row.name,
    role: row.role as Role,
    projects: JSON.parse(row.projects) as string[],
    rolesFrom: row.roles_from === 'owner' ? 'owner' : 'claims',
    createdAt: Number(row.created_at),
    lastSignInAt: row.last_sign_in_at === null ? null : Number(row.last_sign_in_at),
  };
}

/** The caller a signed-in user stands for: the admin API's and the console's, never a model caller. */
export function userCaller(user: User): Caller {
  return Object.freeze({
    keyId: null,
    projectId: null,
    tier: null,
    // The owner and admins may use the console's playground, as the master key may; the others no model.
    allowedModels: user.role === 'owner' || user.role === 'admin' ? null : Object.freeze([]),
    admin: user.role === 'owner' || user.role === 'admin',
    budgets: Object.freeze([]),
    user: Object.freeze({ userId: user.id, role: user.role, projects: Object.freeze([...user.projects]) }),
  });
}

/** A user as the admin API shows it. */
export function userJson(user: User): Record<string, unknown> {
  return {
    object: 'user',
    id: user.id,
    issuer: user.issuer,
    subject: user.subject,
    email: user.email,
    name: user.name,
    role: user.role,
    projects: user.projects,
    roles_from: user.rolesFrom,
    created_at: new Date(user.createdAt).toISOString(),
    last_sign_in_at: user.lastSignInAt === null ? null : new Date(user.lastSignInAt).toISOString(),
  };
}
