import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MASTER } from '../../src/admission/admission.ts';
import { loadConfig } from '../../src/config/load-config.ts';
import { createGateway, type Gateway } from '../../src/server/app.ts';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { parseSse, startGateway } from '../helpers/gateway.ts';
import { tapStreams } from '../helpers/stream-tap.ts';
import { recordedFrames, recordedText } from './faults-support.ts';

const KEY = 'sk-reload-master';
const admin = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
const frames = recordedFrames();
const completion = JSON.stringify({
  id: 'chatcmpl-new',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'from the new target' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
});

/** The config file as `sluice serve` reads it: the gateway's own loader reads it again on each reload. */
function configText(oldUrl: string, newUrl: string, options: { to: 'old' | 'new'; withOld?: boolean; server?: string; extra?: string }): string {
  const providers = [
    options.withOld !== false ? `  old:\n    base_url: ${oldUrl}/v1\n    api_key: sk-old\n` : '',
    `  new:\n    base_url: ${newUrl}/v1\n    api_key: sk-new\n`,
  ].join('');
  return (
    `server:\n  port: ${options.server ?? '0'}\n  host: 127.0.0.1\nstore:\n  path: ':memory:'\nauth:\n  master_key: ${KEY}\n` +
    `providers:\n${providers}routes:\n  smart:\n    targets:\n      - model: ${options.to}/gpt-4o-mini\n${options.extra ?? ''}`
  );
}

const chat = (stream: boolean, model = 'smart') => ({ model, stream, messages: [{ role: 'user', content: 'hi' }] });

describe('reloading the config of a running gateway (POST /admin/reload)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-reload-'));
  const file = join(dir, 'sluice.yaml');
  let oldUp: FakeUpstream;
  let newUp: FakeUpstream;
  let gateway: Gateway;
  let url: string;
  const logs: string[] = [];
  const write = (options: Parameters<typeof configText>[2]) => writeFileSync(file, configText(oldUp.url, newUp.url, options));
  const post = (path: string, body: unknown, headers: Record<string, string> = admin) =>
    fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const reload = async (expected: number) => {
    const res = await post('/admin/reload', {});
    const body = (await res.json()) as Record<string, any>;
    assert.equal(res.status, expected, JSON.stringify(body));
    return body;
  };

  before(async () => {
    oldUp = await startFakeUpstream();
    newUp = await startFakeUpstream();
    // The old target streams slowly: it is still streaming when the config changes under it.
    oldUp.reply({ status: 200, headers: { 'content-type': 'text/event-stream' }, pieces: frames, delayMs: 100 });
    newUp.reply({ status: 200, headers: { 'content-type': 'application/json' }, body: completion });
    write({ to: 'old' });
    const load = () => loadConfig({ file, env: {} });
    gateway = createGateway(load(), {}, undefined, { write: (line: string) => void logs.push(line) }, { reload: { load } });
    tapStreams(gateway.server);
    url = `http://127.0.0.1:${(await gateway.listen()).port}`;
  });
  after(async () => {
    await gateway.shutdown(0);
    await oldUp.close();
    await newUp.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a stream under way finishes normally on its old target; the next request goes to the new route target', async () => {
    const open = await post('/v1/chat/completions', chat(true));
    assert.equal(open.status, 200);
    const reader = open.body!.getReader();
    const first = await reader.read();
    assert.ok(!first.done);

    // The provider of the open stream is gone from the new file altogether.
    write({ to: 'new', withOld: false });
    const answer = await reload(200);
    assert.ok(
      [...gateway.context.scopes].some((scope) => scope.streamed),
      'the stream is still open after the reload',
    );
    assert.equal(answer.object, 'sluice.config_reload');
    assert.deepEqual(answer.changed.toSorted(), ['providers.old', 'routes.smart.targets']);
    assert.deepEqual(answer.restart_required, []);

    const next = await post('/v1/chat/completions', chat(false));
    assert.equal(next.status, 200, await next.clone().text());
    assert.equal(((await next.json()) as any).choices[0].message.content, 'from the new target');
    assert.equal(newUp.requests.length, 1);
    const gone = await post('/v1/chat/completions', chat(false, 'old/gpt-4o-mini'));
    assert.equal(gone.status, 404);

    let text = new TextDecoder().decode(first.value);
    for (let part = await reader.read(); !part.done; part = await reader.read()) text += new TextDecoder().decode(part.value);
    assert.equal(oldUp.requests.length, 1);
    assert.ok(text.endsWith('data: [DONE]\n\n'), text.slice(-200));
    assert.match(text, /"finish_reason":"stop"/);
    assert.doesNotMatch(text, /"error"/);
    const content = parseSse(text)
      .frames.filter((f) => f.data !== '[DONE]')
      .map((f) => JSON.parse(f.data).choices?.[0]?.delta?.content ?? '')
      .join('');
    assert.equal(content, recordedText());
  });

  it('refuses a file that does not load, with every problem, and keeps serving with the running config', async () => {
    writeFileSync(file, `${configText(oldUp.url, newUp.url, { to: 'new' })}server:\n  prot: 1\n`);
    const yaml = await reload(422);
    assert.equal(yaml.error.code, 'config_invalid');
    assert.match(yaml.error.message, /^The config was refused and the running config kept: .*YAML syntax error: Map keys must be unique/);

    writeFileSync(file, configText(oldUp.url, newUp.url, { to: 'new', extra: 'strem:\n  heartbeat_s: 1\nlog:\n  level: loud\n' }));
    const schema = await reload(422);
    assert.match(schema.error.message, /unknown key strem \(did you mean stream\?\)/);
    assert.match(schema.error.message, /log\.level: Invalid option/);

    // The gateway's own check: a route to a provider that is not enabled.
    write({ to: 'old', withOld: false });
    const route = await reload(422);
    assert.match(route.error.message, /routes\.smart\.targets\[0\] \(old\/gpt-4o-mini\): no provider named 'old'/);

    const served = await post('/v1/chat/completions', chat(false));
    assert.equal(served.status, 200);
    assert.equal(newUp.requests.length, 2);
    assert.ok(logs.some((line) => line.includes('config reload refused: the running config is kept') && line.includes('no provider named')));
  });

  it('names the keys that need a restart and keeps their running values; applies the others', async () => {
    write({ to: 'new', withOld: false, server: '1', extra: 'stream:\n  heartbeat_s: 5\n' });
    const answer = await reload(200);
    assert.deepEqual(answer.changed, ['stream.heartbeat_s']);
    assert.deepEqual(answer.restart_required, ['server.port']);
    assert.equal(gateway.context.config.server.port, 0);
    assert.equal(gateway.context.config.stream.heartbeat_s, 5);
    assert.ok(logs.some((line) => line.includes('until a restart') && line.includes('server.port')));
  });

  it('applies the tiers and the default tier of the new file to the next request, and lifts them with the next file', async () => {
    const original = gateway.context.authenticate;
    // A gateway-issued key's caller, without a store round trip: tier null takes the default tier.
    gateway.context.authenticate = (req) => (req.headers['x-test-key'] ? { ...MASTER, admin: false, keyId: 'k1', projectId: 'p1' } : original(req));
    const asKey = () => post('/v1/chat/completions', chat(false), { 'x-test-key': 'k1' });
    write({ to: 'new', withOld: false, extra: 'tiers:\n  tight:\n    requests_per_minute: 1\ndefault_tier: tight\n' });
    assert.deepEqual((await reload(200)).changed.toSorted(), ['default_tier', 'stream.heartbeat_s', 'tiers.tight']);
    assert.equal((await asKey()).status, 200);
    assert.equal((await asKey()).status, 429);
    write({ to: 'new', withOld: false });
    await reload(200);
    assert.equal((await asKey()).status, 200);
  });

  it('counts the reloads by result in /metrics', async () => {
    const text = await (await fetch(`${url}/metrics`, { headers: admin })).text();
    assert.match(text, /^sluice_config_reloads_total\{result="ok"\} 4$/m);
    assert.match(text, /^sluice_config_reloads_total\{result="refused"\} 3$/m);
  });

  it('is an admin route that takes a JSON object and no parameter', async () => {
    assert.equal((await post('/admin/reload', {}, {})).status, 401);
    const named = await post('/admin/reload', { file: '/etc/other.yaml' });
    assert.equal(named.status, 400);
    const error = ((await named.json()) as any).error;
    assert.equal(error.param, 'file');
    assert.match(error.message, /takes no parameter: 'file'/);
    assert.equal((await post('/admin/reload', [])).status, 400);
  });

  it('is a 404 on a gateway built without a config source', async () => {
    const bare = await startGateway();
    try {
      const res = await fetch(`${bare.url}/admin/reload`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      assert.equal(res.status, 404);
      assert.equal(((await res.json()) as any).error.code, 'route_not_found');
    } finally {
      await bare.close();
    }
  });
});

describe('reloading tiers into a gateway that started with limits.redis_url and no tier', () => {
  it('keeps the running tiers and names them as needing a restart: Redis is connected at start only when tiers exist', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-reload-redis-'));
    const file = join(dir, 'sluice.yaml');
    // Nothing listens there: a gateway without tiers never connects.
    const base = `server:\n  port: 0\nstore:\n  path: ':memory:'\nlimits:\n  redis_url: redis://127.0.0.1:1\n`;
    writeFileSync(file, base);
    const load = () => loadConfig({ file, env: {} });
    const gateway = createGateway(load(), {}, undefined, { write: () => {} }, { reload: { load } });
    try {
      writeFileSync(file, `${base}tiers:\n  free:\n    requests_per_minute: 1\ndefault_tier: free\nstream:\n  heartbeat_s: 5\n`);
      assert.deepEqual(gateway.reload(), { ok: true, changed: ['stream.heartbeat_s'], restartRequired: ['tiers.free', 'default_tier'] });
      assert.deepEqual(gateway.context.config.tiers, {});
      assert.equal(gateway.context.config.default_tier, undefined);
    } finally {
      await gateway.shutdown(0);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
