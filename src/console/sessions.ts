import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Authenticate } from '../pipeline/admit.ts';

export const SESSION_COOKIE = 'sluice_console';

/** How long a console login lasts without use (sliding), and how many may be open at once. */
const IDLE_MS = 12 * 60 * 60 * 1000;
const MAX_SESSIONS = 1_000;

/**
 * The console's logins: the browser holds an opaque random id (an HttpOnly, SameSite=Strict
 * cookie), this instance maps it to the key that logged in. The key is kept, not the caller it
 * stood for, so every request still goes through authenticate: a revoked key ends its sessions
 * within the key cache's TTL. In memory: a restart (or another instance) asks to log in again.
 */
export class ConsoleSessions {
  private readonly byId = new Map<string, { key: string; lastUsed: number }>();
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  /** A new session for a key already authenticated as an admin; returns its id. */
  open(key: string): string {
    if (this.byId.size >= MAX_SESSIONS) this.evictOldest();
    const id = randomBytes(32).toString('base64url');
    this.byId.set(id, { key, lastUsed: this.now() });
    return id;
  }

  close(req: IncomingMessage): void {
    const id = sessionIdOf(req);
    if (id) this.byId.delete(id);
  }

  /** The key of the request's live session, if it has one. */
  keyOf(req: IncomingMessage): string | undefined {
    const id = sessionIdOf(req);
    const session = id ? this.byId.get(id) : undefined;
    if (!id || !session) return undefined;
    const t = this.now();
    if (t - session.lastUsed > IDLE_MS) {
      this.byId.delete(id);
      return undefined;
    }
    session.lastUsed = t;
    return session.key;
  }

  /**
   * Authentication that also takes a console session when the request presents no key itself:
   * the key path is unchanged, and a session stands for exactly the key that opened it.
   */
  wrap(authenticate: Authenticate): Authenticate {
    return (req) => {
      if (req.headers.authorization !== undefined || req.headers['x-api-key'] !== undefined) return authenticate(req);
      const key = this.keyOf(req);
      if (key === undefined) return authenticate(req);
      // authenticate reads only the headers: the session's key presented as the request's own.
      return authenticate({ headers: { authorization: `Bearer ${key}` } } as IncomingMessage);
    };
  }

  private evictOldest(): void {
    let oldest: string | undefined;
    let at = Number.POSITIVE_INFINITY;
    for (const [id, s] of this.byId) {
      if (s.lastUsed < at) {
        at = s.lastUsed;
        oldest = id;
      }
    }
    if (oldest) this.byId.delete(oldest);
  }
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

export function clearedCookie(): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`;
}
