import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANONYMOUS, actorOf } from './audit-actor.ts';

describe('actorOf', () => {
  const names = {
    key: async (id: string) => (id === 'k1' ? 'ops' : null),
    user: async (id: string) => (id === 'u1' ? 'ada@example.com' : null),
  };

  it('the master key (or a keyless gateway) is master; a key is its id and name; nobody is anonymous', async () => {
    assert.deepEqual(await actorOf({ keyId: null }, names), { kind: 'master', id: 'master', name: null });
    assert.deepEqual(await actorOf({ keyId: 'k1' }, names), { kind: 'key', id: 'k1', name: 'ops' });
    assert.deepEqual(await actorOf({ keyId: 'k2' }, names), { kind: 'key', id: 'k2', name: null });
    assert.equal(await actorOf(null, names), ANONYMOUS);
  });

  it('a signed-in user is the user, from a caller or from a session', async () => {
    const user = { kind: 'user', id: 'u1', name: 'ada@example.com' };
    assert.deepEqual(await actorOf({ keyId: null, user: { userId: 'u1' } }, names), user);
    assert.deepEqual(await actorOf({ keyId: null, userId: 'u1' }, names), user);
    assert.deepEqual(await actorOf({ keyId: null, userId: 'u9' }, names), { kind: 'user', id: 'u9', name: null });
  });
});
