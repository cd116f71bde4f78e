import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { errors } from '../../errors/catalog.ts';
import { formatKey } from '../../governance/keys/key-format.ts';
import { type Authenticate, type Caller, MASTER } from '../../admission/admission.ts';
import { throttleAuthFailures } from './throttle-auth.ts';

const GOOD_ID = '0123456789abcdef';
const GOOD = formatKey(GOOD_ID, 'A'.repeat(43));
const WRONG = formatKey(GOOD_ID, 'B'.repeat(43));
const KEY_CALLER: Caller = { ...MASTER, keyId: GOOD_ID, admin: false };

/** The master key `sk-master`, and one gateway key; `async` answers through a promise, as an uncached key does. */
function inner(async: boolean): Authenticate {
  const decide = (req: IncomingMessage): Caller => {
    const key = req.headers.authorization?.slice(7);
    if (!key) throw errors.missingKey();
    if (key === 'sk-master') return MASTER;
    if (key === GOOD) return KEY_CALLER;
    throw errors.wrongKey();
  };
  return (req) => (async ? Promise.resolve().then(() => decide(req)) : decide(req));
}

const from = (client: string, key?: string) =>
  ({ headers: key === undefined ? {} : { authorization: `Bearer ${key}` }, socket: { remoteAddress: client } }) as unknown as IncomingMessage;

function setup(async = false, limit = 3) {
  let t = 0;
  const counted = { failed: 0, address: 0, key_id: 0 };
  const authenticate = throttleAuthFailures(inner(async), {
    failuresPerMinute: limit,
    clientOf: (req) => req.socket.remoteAddress ?? '',
    counters: { failed: () => counted.failed++, throttled: (scope) => counted[scope]++ },
    now: () => t,
  });
  const attempt = async (req: IncomingMessage) => {
    try {
      await authenticate(req);
      return 200;
    } catch (err) {
      return err as { status: number; code: string; headers: Record<string, string> };
    }
  };
  return { attempt, counted, advance: (ms: number) => (t += ms) };
}

for (const async of [false, true]) {
  const how = async ? 'an asynchronous' : 'a synchronous';
  test(`guessing keys is free no more (${how} authenticate): 429 with Retry-After past the limit, per client`, async () => {
    const { attempt, counted, advance } = setup(async);
    for (let i = 0; i < 3; i++) assert.equal(((await attempt(from('10.0.0.1', `sk-guess-${i}`))) as { status: number }).status, 401);
    const refused = await attempt(from('10.0.0.1', 'sk-master'));
    assert.deepEqual(refused, errors.authThrottled('address', 20_000));
    assert.equal((refused as { headers: Record<string, string> }).headers['retry-after'], '20');
    // Another client, with the right key, is let in; so is this one once the bucket has room.
    assert.equal(await attempt(from('10.0.0.2', 'sk-master')), 200);
    advance(20_000);
    assert.equal(await attempt(from('10.0.0.1', 'sk-master')), 200);
    assert.deepEqual(counted, { failed: 3, address: 1, key_id: 0 });
  });
}

test('a throttled client still has well-formed sluice keys checked: the right one passes, a wrong one is 429', async () => {
  const { attempt, counted } = setup();
  for (let i = 0; i < 3; i++) await attempt(from('10.0.0.1', `sk-guess-${i}`));
  assert.equal(await attempt(from('10.0.0.1', GOOD)), 200);
  assert.equal(((await attempt(from('10.0.0.1', formatKey('fedcba9876543210', 'C'.repeat(43))))) as { code: string }).code, 'too_many_auth_failures');
  assert.equal(((await attempt(from('10.0.0.1'))) as { code: string }).code, 'too_many_auth_failures');
  assert.deepEqual(counted, { failed: 4, address: 2, key_id: 0 });
});

test('a key id guessed at from many clients answers its wrong secrets 429, and its right secret still passes', async () => {
  const { attempt, counted } = setup();
  for (let i = 0; i < 3; i++) assert.equal(((await attempt(from(`10.0.1.${i}`, WRONG))) as { status: number }).status, 401);
  assert.deepEqual(await attempt(from('10.0.1.9', WRONG)), errors.authThrottled('key_id', 20_000));
  assert.equal(await attempt(from('10.0.2.1', GOOD)), 200);
  assert.deepEqual(counted, { failed: 4, address: 0, key_id: 1 });
});

test('missing keys are not failures; a right key does not count', async () => {
  const { attempt, counted } = setup();
  for (let i = 0; i < 10; i++) {
    assert.equal(((await attempt(from('10.0.0.1'))) as { code: string }).code, 'missing_api_key');
    assert.equal(await attempt(from('10.0.0.1', 'sk-master')), 200);
  }
  assert.deepEqual(counted, { failed: 0, address: 0, key_id: 0 });
});

test('0 turns the throttle off', async () => {
  const authenticate = inner(false);
  assert.equal(throttleAuthFailures(authenticate, { failuresPerMinute: 0, clientOf: () => '' }), authenticate);
});
