import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import type { VerifiedKey } from '../governance/keys/authenticate.ts';
import { type Caller, MASTER } from '../admission/admission.ts';
import type { User } from '../governance/users/users.ts';
import { ConsoleSessions, MemorySessionRecords, SESSION_COOKIE } from './sessions.ts';

const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
const withCookie = (id: string) => request({ cookie: `other=1; ${SESSION_COOKIE}=${id}` });
const ADMIN: Caller = { ...MASTER, keyId: 'k1', projectId: 'p1' };

/** A keys cache holding one admin key, whose revocation a test can set. */
function keysWith(key: Partial<VerifiedKey>) {
  const verified = { revokedAt: null, disabledAt: null, expiresAt: null, caller: ADMIN, ...key } as VerifiedKey;
  return { get: async (id: string) => (id === 'k1' ? verified : undefined), verified };
}

/** No users: the key sessions' tests. */
const users = { get: async () => undefined };

describe('console sessions', () => {
  it('stand for the master key while it is unchanged, and a sent key wins over the cookie', async () => {
    const keys = keysWith({});
    const records = new MemorySessionRecords();
    const sessions = new ConsoleSessions({ keys, masterKey: 'sk-master', records, users });
    const id = await sessions.open(MASTER);
    assert.equal(await sessions.callerOf(withCookie(id)), MASTER);
    const seen: (string | undefined)[] = [];
    const authenticate = sessions.wrap((req) => {
      seen.push(req.headers.authorization);
      return ADMIN;
    });
    assert.equal(await authenticate(withCookie(id)), MASTER);
    assert.equal(await authenticate(request({ cookie: `${SESSION_COOKIE}=${id}`, authorization: 'Bearer sk-own' })), ADMIN);
    assert.equal(await authenticate(withCookie('unknown')), ADMIN);
    assert.deepEqual(seen, ['Bearer sk-own', undefined]);
    // Another gateway (or this one restarted) with another master key: the session no longer stands.
    const rotated = new ConsoleSessions({ keys, masterKey: 'sk-new-master', records, users });
    await assert.rejects(rotated.callerOf(withCookie(id)), { code: 'invalid_api_key' });
  });

  it('stand for an admin key until it is revoked', async () => {
    const keys = keysWith({});
    const sessions = new ConsoleSessions({ keys, masterKey: 'sk-master', users });
    const id = await sessions.open(ADMIN);
    assert.equal(await sessions.callerOf(withCookie(id)), ADMIN);
    keys.verified.revokedAt = 1;
    await assert.rejects(sessions.callerOf(withCookie(id)), { code: 'api_key_revoked' });
  });

  it('end at logout and after 12 idle hours', async () => {
    let now = 0;
    const sessions = new ConsoleSessions({ keys: keysWith({}), masterKey: 'sk-master', now: () => now, users });
    const a = await sessions.open(MASTER);
    const b = await sessions.open(MASTER);
    // Closing says whom the session stood for (the audit log's sign-out), once.
    assert.equal((await sessions.close(withCookie(a)))?.keyId, null);
    assert.equal(await sessions.close(withCookie(a)), undefined);
    assert.equal(await sessions.callerOf(withCookie(a)), undefined);
    now = 12 * 60 * 60 * 1000;
    assert.equal(await sessions.callerOf(withCookie(b)), MASTER);
    now += 12 * 60 * 60 * 1000 + 1;
    assert.equal(await sessions.callerOf(withCookie(b)), undefined);
  });

  it('stand for a user with the role the user has now, and end with the user', async () => {
    const user: User = {
      id: 'usr_1',
      issuer: 'https://idp',
      subject: 's1',
      email: null,
      name: null,
      role: 'member',
      projects: ['p1'],
      rolesFrom: 'claims',
      createdAt: 0,
      lastSignInAt: 0,
    };
    const stored = new Map([[user.id, user]]);
    const sessions = new ConsoleSessions({ keys: keysWith({}), masterKey: 'sk-master', users: { get: async (id) => stored.get(id) } });
    const id = await sessions.openForUser(user, 'id-token');
    assert.deepEqual((await sessions.callerOf(withCookie(id)))?.user, { userId: 'usr_1', role: 'member', projects: ['p1'] });
    stored.set(user.id, { ...user, role: 'viewer', projects: [] });
    assert.equal((await sessions.callerOf(withCookie(id)))?.user?.role, 'viewer');
    stored.clear();
    await assert.rejects(sessions.callerOf(withCookie(id)), { code: 'invalid_api_key' });
    const closed = await sessions.close(withCookie(id));
    assert.equal(closed?.idToken, 'id-token');
  });
});
