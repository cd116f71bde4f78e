import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import { type Caller, MASTER } from '../../admission/admission.ts';
import { createAuthenticate, type VerifiedKey, verifiedKey } from './authenticate.ts';
import type { ApiKey, Project } from './governance-store.ts';
import { createSecretHasher, formatKey, newKeyId, newSecret } from './key-format.ts';
import { TtlCache } from './ttl-cache.ts';

const PROJECT: Project = {
  id: 'proj_a',
  name: 'A',
  tier: 'silver',
  budgetDayUsd: null,
  budgetMonthUsd: 20,
  allowedModels: null,
  metadata: null,
  createdAt: 0,
  deletedAt: null,
};
const hasher = createSecretHasher('pepper');

function storedKey(over: Partial<ApiKey> = {}): { key: string; row: ApiKey } {
  const id = newKeyId();
  const secret = newSecret();
  const row: ApiKey = {
    id,
    projectId: 'proj_a',
    name: null,
    secretHash: hasher(secret).toString('hex'),
    previousHash: null,
    previousValidUntil: null,
    tier: null,
    allowedModels: null,
    budgetDayUsd: 1,
    budgetMonthUsd: null,
    admin: false,
    createdAt: 0,
    expiresAt: null,
    revokedAt: null,
    lastUsedAt: null,
    disabledAt: null,
    deletedAt: null,
    ...over,
  };
  return { key: formatKey(id, secret), row };
}

/** An authenticator over an in-memory table, counting store loads and hash computations. */
function setup(rows: ApiKey[], options: { masterKey?: string; now?: () => number } = {}) {
  const counts = { loads: 0, hashes: 0, touched: [] as string[] };
  const keys = new TtlCache<VerifiedKey>({
    ttlMs: 10_000,
    now: options.now,
    load: async (id) => {
      counts.loads++;
      const row = rows.find((r) => r.id === id);
      return row ? verifiedKey(row, PROJECT, 'free') : undefined;
    },
  });
  const authenticate = createAuthenticate({
    masterKey: options.masterKey,
    keys,
    hash: (secret) => {
      counts.hashes++;
      return hasher(secret);
    },
    used: (id) => counts.touched.push(id),
    now: options.now,
  });
  const call = (authorization?: string) =>
    Promise.resolve().then(() => authenticate({ headers: authorization ? { authorization } : {} } as IncomingMessage));
  return { call, counts, keys };
}

async function refusal(promise: Promise<Caller>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return `${err.status} ${err.code}`;
  }
  return 'accepted';
}

describe('authenticate', () => {
  it('the master key works as before; without one configured, anyone is the operator', async () => {
    const { call } = setup([], { masterKey: 'master-secret' });
    assert.equal(await call('Bearer master-secret'), MASTER);
    assert.equal(await refusal(call('Bearer nope')), '401 invalid_api_key');
    assert.equal(await refusal(call()), '401 missing_api_key');
    assert.equal(await setup([]).call(), MASTER);
  });

  it('a gateway key stands for its caller: project, tier (key, else project), budgets, models, admin', async () => {
    const { key, row } = storedKey({ allowedModels: ['fast'] });
    const caller = await setup([row], { masterKey: 'm' }).call(`Bearer ${key}`);
    assert.deepEqual(
      { ...caller, budgets: [...caller.budgets], allowedModels: caller.allowedModels && [...caller.allowedModels] },
      {
        keyId: row.id,
        projectId: 'proj_a',
        tier: 'silver',
        allowedModels: ['fast'],
        admin: false,
        budgets: [
          { scope: 'key', period: 'day', limitUsd: 1 },
          { scope: 'project', period: 'month', limitUsd: 20 },
        ],
      },
    );
    const own = storedKey({ tier: 'gold' });
    assert.equal((await setup([own.row]).call(`Bearer ${own.key}`)).tier, 'gold');
    const bare = verifiedKey(storedKey().row, { ...PROJECT, tier: null }, 'free');
    assert.equal(bare.caller.tier, 'free');
    // A project's models are its keys' unless a key lists its own.
    const listed = { ...PROJECT, allowedModels: ['fast'] };
    assert.deepEqual(verifiedKey(storedKey().row, listed, null).caller.allowedModels, ['fast']);
    assert.deepEqual(verifiedKey(storedKey({ allowedModels: ['slow'] }).row, listed, null).caller.allowedModels, ['slow']);
  });

  it('a gateway key is checked even on a keyless gateway', async () => {
    const { key, row } = storedKey();
    const { call } = setup([row]);
    assert.equal((await call(`Bearer ${key}`)).keyId, row.id);
    assert.equal(await refusal(call(`Bearer ${formatKey(row.id, newSecret())}`)), '401 invalid_api_key');
  });

  it('a wrong secret, an unknown key id and a right key take the same path: one hash and the comparisons each', async () => {
    const { key, row } = storedKey();
    const { call, counts } = setup([row], { masterKey: 'm' });
    await call(`Bearer ${key}`);
    assert.equal(counts.hashes, 1);
    assert.equal(await refusal(call(`Bearer ${formatKey(row.id, newSecret())}`)), '401 invalid_api_key');
    assert.equal(counts.hashes, 2);
    assert.equal(await refusal(call(`Bearer ${formatKey(newKeyId(), newSecret())}`)), '401 invalid_api_key');
    assert.equal(counts.hashes, 3);
  });

  it('revoked, disabled and expired keys are 401s, said so only to whoever holds the secret', async () => {
    let now = 1_000;
    const revoked = storedKey({ revokedAt: 500 });
    const disabled = storedKey({ disabledAt: 600 });
    const expiring = storedKey({ expiresAt: 2_000 });
    const { call } = setup([revoked.row, disabled.row, expiring.row], { masterKey: 'm', now: () => now });
    assert.equal(await refusal(call(`Bearer ${revoked.key}`)), '401 api_key_revoked');
    assert.equal(await refusal(call(`Bearer ${formatKey(revoked.row.id, newSecret())}`)), '401 invalid_api_key');
    assert.equal(await refusal(call(`Bearer ${disabled.key}`)), '401 api_key_disabled');
    assert.equal(await refusal(call(`Bearer ${formatKey(disabled.row.id, newSecret())}`)), '401 invalid_api_key');
    assert.equal((await call(`Bearer ${expiring.key}`)).keyId, expiring.row.id);
    now = 2_000;
    assert.equal(await refusal(call(`Bearer ${expiring.key}`)), '401 api_key_expired');
  });

  it('after a rotation with a grace period the previous secret works until it ends', async () => {
    let now = 1_000;
    const old = newSecret();
    const { key, row } = storedKey({ previousHash: hasher(old).toString('hex'), previousValidUntil: 5_000 });
    const { call } = setup([row], { masterKey: 'm', now: () => now });
    assert.equal((await call(`Bearer ${formatKey(row.id, old)}`)).keyId, row.id);
    assert.equal((await call(`Bearer ${key}`)).keyId, row.id);
    now = 5_000;
    assert.equal(await refusal(call(`Bearer ${formatKey(row.id, old)}`)), '401 invalid_api_key');
    assert.equal((await call(`Bearer ${key}`)).keyId, row.id);
  });

  it('a verified key is served from memory: one store load per key and TTL, unknown ids cached too', async () => {
    const { key, row } = storedKey();
    const { call, counts, keys } = setup([row], { masterKey: 'm' });
    const unknown = formatKey(newKeyId(), newSecret());
    await Promise.all([call(`Bearer ${key}`), call(`Bearer ${key}`)]);
    for (let i = 0; i < 5; i++) {
      await call(`Bearer ${key}`);
      await refusal(call(`Bearer ${unknown}`));
    }
    assert.equal(counts.loads, 2);
    // This instance forgets a key at once (its own revocation); the next call reads it again.
    keys.delete(row.id);
    await call(`Bearer ${key}`);
    assert.equal(counts.loads, 3);
  });

  it('records a key as used at most once a minute', async () => {
    let now = 100_000;
    const { key, row } = storedKey();
    const { call, counts } = setup([row], { masterKey: 'm', now: () => now });
    await call(`Bearer ${key}`);
    now += 59_000;
    await call(`Bearer ${key}`);
    now += 2_000;
    await call(`Bearer ${key}`);
    assert.deepEqual(counts.touched, [row.id, row.id]);
  });

  it('a malformed sluice-looking key is just a wrong key', async () => {
    const { call } = setup([], { masterKey: 'm' });
    assert.equal(await refusal(call('Bearer sk-sluice-not-a-key')), '401 invalid_api_key');
  });
});
