import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSecretHasher, formatKey, keyPrefix, newKeyId, newSecret, parseKey } from './key-format.ts';

describe('key format', () => {
  it('a new key parses back into its id and secret', () => {
    const keyId = newKeyId();
    const secret = newSecret();
    const key = formatKey(keyId, secret);
    assert.match(key, /^sk-sluice-[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(parseKey(key), { keyId, secret });
    assert.equal(keyPrefix(keyId), `sk-sluice-${keyId}`);
  });

  it('secrets carry 256 bits: 32 random bytes, never the same twice', () => {
    const secrets = new Set(Array.from({ length: 1000 }, newSecret));
    assert.equal(secrets.size, 1000);
    for (const s of secrets) assert.equal(Buffer.from(s, 'base64url').length, 32);
  });

  it('anything else is not a key', () => {
    const good = formatKey('0123456789abcdef', 'A'.repeat(43));
    for (const bad of [
      good.slice(0, -1),
      `${good}x`,
      good.replace('sk-sluice-', 'sk-'),
      good.replace('0123456789abcdef', '0123456789ABCDEF'),
      good.replace('_A', '-A'),
      ` ${good}`,
      'sk-sluice-',
    ]) {
      assert.equal(parseKey(bad), undefined, bad);
    }
  });

  it('the hash is keyed: another pepper gives another hash', () => {
    const secret = newSecret();
    const a = createSecretHasher('pepper-a')(secret);
    assert.equal(a.length, 32);
    assert.deepEqual(createSecretHasher('pepper-a')(secret), a);
    assert.notDeepEqual(createSecretHasher('pepper-b')(secret), a);
    assert.notDeepEqual(createSecretHasher(undefined)(secret), a);
  });
});
