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

  it('is HMAC-SHA256 keyed with the pepper as UTF-8, so hashes already stored keep matching', () => {
    const secret = 'A'.repeat(43);
    // Digests of the stored form (HMAC-SHA256 of the secret, the pepper's UTF-8 bytes as the key).
    assert.equal(createSecretHasher('pepper-a')(secret).toString('hex'), '95869cb810b0fd016404985d820a99231b6dd85fe4562703af3f94754db3c550');
    assert.equal(createSecretHasher(undefined)(secret).toString('hex'), '58a98994c1004fc700ad0009805ea809bd5344b59ffe875444e3c289b7838888');
    assert.equal(createSecretHasher('pfeffer-ß')(secret).toString('hex'), '37c29f24c5ed0edd70b9ca9e110940cdfff6cd0447d5598d83faa44ffb22ac0e');
  });
});
