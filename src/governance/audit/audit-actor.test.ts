import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANONYMOUS, actorOf } from './audit-actor.ts';

describe('actorOf', () => {
  const names = async (id: string) => (id === 'k1' ? 'ops' : null);

  it('the master key (or a keyless gateway) is master; a key is its id and name; nobody is anonymous', async () => {
    assert.deepEqual(await actorOf({ keyId: null }, names), { kind: 'master', id: 'master', name: null });
    assert.deepEqual(await actorOf({ keyId: 'k1' }, names), { kind: 'key', id: 'k1', name: 'ops' });
    assert.deepEqual(await actorOf({ keyId: 'k2' }, names), { kind: 'key', id: 'k2', name: null });
    assert.equal(await actorOf(null, names), ANONYMOUS);
  });
});
