import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { configSchema } from '../../src/config/schema.ts';
import { GovernanceStore } from '../../src/governance/keys/governance-store.ts';
import { createSecretHasher, parseKey } from '../../src/governance/keys/key-format.ts';
import { createGateway, type Gateway } from '../../src/server/app.ts';
import { openDatabase } from '../../src/store/open-database.ts';
import { adminCall, chatWith, projectWithKey } from '../helpers/admin-client.ts';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { tapStreams } from '../helpers/stream-tap.ts';

const MASTER = 'sk-master-never-logged-4f1c9a';
const PEPPER = 'pepper-never-logged-77b2';
const PROVIDER_KEY = 'sk-proj-upstreamSecret0123456789abcdefXYZ';

/**
 * Everything the gateway says to anyone, captured whole: its log function, the console (some
 * corners log there), every response body a client got, the request log and the admin listings.
 * Then grep it for every secret in play: the master key, each gateway key, its secret, its stored
 * hash (with and without the pepper), the pepper, the provider key. Only the two answers that
 * exist to hand a key over (create, rotate) are left out of the haystack.
 */
describe('no key, hash or provider secret appears in logs, errors or the request log', () => {
  let upstream: FakeUpstream;
  let gateway: Gateway;
  let url = '';
  const said: string[] = [];
  const consoleMethods = ['log', 'error', 'warn', 'info', 'debug'] as const;
  const originals = consoleMethods.map((m) => console[m]);

  before(async () => {
    for (const m of consoleMethods) {
      console[m] = (...args: unknown[]) => {
        said.push(args.map((a) => (a instanceof Error ? `${a.stack}` : String(a))).join(' '));
      };
    }
    upstream = await startFakeUpstream();
    // The upstream answers every request with a 401 that echoes what it was sent: its headers
    // (the provider key among them) and its body.
    upstream.reply((req) => ({
      status: 401,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        error: {
          message: `Incorrect API key provided: ${String(req.headers.authorization)}; headers ${JSON.stringify(req.headers)}; body ${req.body}`,
          type: 'invalid_request_error',
          code: 'invalid_api_key',
        },
      }),
    }));
    const config = configSchema.parse({
      server: { port: 0, host: '127.0.0.1' },
      store: { path: ':memory:' },
      auth: { master_key: MASTER, key_pepper: PEPPER },
      ledger: { flush_interval_ms: 10 },
      providers: { up: { base_url: `${upstream.url}/v1`, api_key: PROVIDER_KEY } },
    });
    // Its structured log too (the start-up line, one line per request).
    gateway = createGateway(config, {}, (line) => said.push(line), { write: (line: string) => void said.push(line) });
    tapStreams(gateway.server); // its streams are checked like startGateway's (stream-tap.ts)
    const address = await gateway.listen();
    url = `http://127.0.0.1:${address.port}`;
  });
  after(async () => {
    await gateway?.shutdown(0);
    await upstream?.close();
    consoleMethods.forEach((m, i) => (console[m] = originals[i]));
  });

  it('after accepted, refused and failed requests with keys of every kind', async () => {
    const plain = await projectWithKey(url, MASTER, 'leaks', { models: ['up/model', 'mock/echo', 'mock/error'] });
    const admin = await projectWithKey(url, MASTER, 'leaks', { admin: true });
    const rotatedAway = await projectWithKey(url, MASTER, 'leaks');
    const rotation = await adminCall(url, MASTER, 'POST', `/admin/keys/${rotatedAway.id}/rotate`, {});
    const revoked = await projectWithKey(url, MASTER, 'leaks');
    await adminCall(url, MASTER, 'POST', `/admin/keys/${revoked.id}/revoke`, {});
    const keys: string[] = [plain.key, admin.key, rotatedAway.key, rotation.body.key, revoked.key];
    const wrongSecret = `${plain.key.slice(0, -6)}AAAAAA`;

    const answers: string[] = [];
    const chat = async (key: string | undefined, body: Record<string, unknown>) => answers.push((await chatWith(url, key, body)).text);
    await chat(plain.key, { model: 'mock/echo' });
    await chat(plain.key, { model: 'mock/echo', stream: true });
    await chat(plain.key, { model: 'mock/error', stream: true });
    await chat(plain.key, { model: 'up/model' });
    await chat(plain.key, { model: 'up/model', stream: true, messages: [{ role: 'user', content: 'hello' }] });
    await chat(plain.key, { model: 'mock/reasoning' });
    await chat(admin.key, { model: 'up/model' });
    await chat(MASTER, { model: 'up/model' });
    for (const refused of [wrongSecret, rotatedAway.key, revoked.key, `Bearer ${plain.key}`, plain.key.toUpperCase()]) {
      await chat(refused, { model: 'mock/echo' });
    }
    answers.push((await adminCall(url, plain.key, 'GET', '/admin/keys')).text);
    answers.push((await adminCall(url, wrongSecret, 'GET', '/v1/requests')).text);
    answers.push((await adminCall(url, plain.key, 'GET', '/v1/requests?limit=1000')).text);
    for (const path of ['/v1/requests?limit=1000', '/v1/requests?order=asc&limit=1000', '/admin/keys', '/admin/projects', '/v1/models']) {
      answers.push((await adminCall(url, MASTER, 'GET', path)).text);
    }
    // Paths that log: a model name the ledger must clean (logged with the request id), and the
    // key store failing under a key this instance has not cached yet (a 503 and a log line).
    await chat(plain.key, { model: 'mock/echo\u0000' });
    const unseen = await projectWithKey(url, MASTER, 'leaks');
    keys.push(unseen.key);
    const broken = await openDatabase({ path: ':memory:' });
    await broken.db.destroy();
    gateway.context.governance.attach(new GovernanceStore(broken.db));
    const unavailable = await chatWith(url, unseen.key, { model: 'mock/echo' });
    assert.equal(unavailable.status, 503);
    answers.push(unavailable.text);
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(
      said.some((line) => line.startsWith('governance: ')),
      said.join('\n'),
    );

    const hashOf = (key: string, pepper: string | undefined) => createSecretHasher(pepper)(parseKey(key)?.secret ?? '').toString('hex');
    const secrets: Record<string, string> = { MASTER, PEPPER, PROVIDER_KEY };
    keys.forEach((key, i) => {
      secrets[`key ${i}`] = key;
      secrets[`secret of key ${i}`] = parseKey(key)?.secret ?? 'unparsed';
      secrets[`hash of key ${i}`] = hashOf(key, PEPPER);
      secrets[`unpeppered hash of key ${i}`] = hashOf(key, undefined);
    });
    // The stored hashes really are these (the haystack would otherwise prove nothing about them).
    assert.equal(secrets['hash of key 0'].length, 64);

    const upstreamSaw = upstream.requests.map((r) => JSON.stringify(r.headers) + r.body).join('\n');
    assert.ok(upstreamSaw.includes(PROVIDER_KEY), 'the upstream was called with the provider key');
    assert.ok(
      answers.some((a) => a.includes('Incorrect API key provided')),
      'the upstream error reached the client',
    );
    const haystacks = { 'the log': said.join('\n'), 'what clients received': answers.join('\n') };
    for (const [where, text] of Object.entries(haystacks)) {
      for (const [what, secret] of Object.entries(secrets)) assert.ok(!text.includes(secret), `${what} appears in ${where}`);
    }
    for (const key of keys) assert.ok(!upstreamSaw.includes(key), 'a gateway key went upstream');
  });
});
