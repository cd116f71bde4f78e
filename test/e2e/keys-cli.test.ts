import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { chatWith } from '../helpers/admin-client.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

const bin = fileURLToPath(new URL('../../bin/sluice.js', import.meta.url));
const cwd = mkdtempSync(join(tmpdir(), 'sluice-keys-cli-'));
after(() => rmSync(cwd, { recursive: true, force: true }));

const MASTER = 'sk-master-keys-cli';

describe('sluice projects | keys | endpoints', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ auth: { master_key: MASTER }, model_list: [{ model_name: 'fast', model: 'mock/echo' }] });
  });
  after(() => gw?.close());

  /** The real command, against the test gateway, with the master key unless told otherwise. */
  function sluice(args: string[], key: string | undefined = MASTER): Promise<{ code: number; stdout: string; stderr: string }> {
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', SLUICE_URL: gw.url };
    if (key) env.SLUICE_MASTER_KEY = key;
    return new Promise((resolve) => {
      execFile(process.execPath, [bin, ...args], { cwd, env, timeout: 60_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });
  }

  async function refused(args: string[], code: number, pattern: RegExp, key?: string) {
    const result = await sluice(args, key);
    assert.equal(result.code, code, result.stderr);
    const lines = result.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, result.stderr);
    assert.match(lines[0], pattern);
    assert.equal(result.stdout, '');
  }

  it('creates a project and a key, lists it without the secret, rotates and revokes it', async () => {
    const project = await sluice(['projects', 'create', 'Team A', '--id', 'team-a', '--monthly-usd', '25']);
    assert.equal(project.code, 0, project.stderr);
    assert.equal(project.stdout, 'team-a\n');
    assert.match((await sluice(['projects', 'list'])).stdout, /^ID +NAME +TIER[^\n]*\nteam-a +Team A +- +- +25 /);

    const created = await sluice(['keys', 'create', '--project', 'team-a', '--name', 'ci', '--models', 'fast,mock/echo', '--expires-in', '30d']);
    assert.equal(created.code, 0, created.stderr);
    const key = created.stdout.trim();
    assert.match(key, /^sk-sluice-[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    assert.match(created.stderr, /shown only now/);
    const id = key.slice('sk-sluice-'.length, 'sk-sluice-'.length + 16);
    assert.equal((await chatWith(gw.url, key, { model: 'fast' })).status, 200);

    const listed = await sluice(['keys', 'list', '--project', 'team-a']);
    assert.match(listed.stdout, new RegExp(`^${id} +team-a +ci +- +active `, 'm'));
    assert.ok(!listed.stdout.includes(key.slice(-43)));
    const json = JSON.parse((await sluice(['keys', 'list', '--json'])).stdout) as { id: string; models: string[] }[];
    assert.deepEqual(json.find((k) => k.id === id)?.models, ['fast', 'mock/echo']);

    const rotated = await sluice(['keys', 'rotate', id, '--grace', '10m']);
    assert.equal(rotated.code, 0, rotated.stderr);
    const next = rotated.stdout.trim();
    assert.notEqual(next, key);
    assert.match(rotated.stderr, /the old one works until/);
    assert.equal((await chatWith(gw.url, next, { model: 'fast' })).status, 200);

    const revoked = await sluice(['keys', 'revoke', id]);
    assert.match(revoked.stdout, new RegExp(`^Key ${id} revoked`));
    assert.equal((await chatWith(gw.url, next, { model: 'fast' })).status, 401);
  });

  it('creates an endpoint and prints its base URL', async () => {
    await sluice(['projects', 'create', 'Endpoints', '--id', 'ends']);
    const created = await sluice(['endpoints', 'create', '--project', 'ends', '--name', 'chat', '--model', 'fast', '--usage', 'always']);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.stdout, `${gw.url}/ends/chat/v1\n`);
    assert.match((await sluice(['endpoints', 'list', '--project', 'ends'])).stdout, /^ends +chat +fast +- +always +- +- +\/ends\/chat\/v1$/m);
    const cached = await sluice(['endpoints', 'create', '--project', 'ends', '--name', 'faq', '--model', 'fast', '--cache-ttl', '5m']);
    assert.equal(cached.code, 0, cached.stderr);
    assert.match((await sluice(['endpoints', 'list', '--project', 'ends'])).stdout, /^ends +faq +fast +- +- +- +300s\/1048576B +\/ends\/faq\/v1$/m);
  });

  it('updates, disables, enables and deletes a key; updates and deletes a project and an endpoint', async () => {
    await sluice(['projects', 'create', 'Edits', '--id', 'edits']);
    const key = (await sluice(['keys', 'create', '--project', 'edits', '--name', 'ci'])).stdout.trim();
    const id = key.slice('sk-sluice-'.length, 'sk-sluice-'.length + 16);
    const updated = await sluice(['keys', 'update', id, '--name', 'deploy', '--models', 'fast', '--daily-usd', '3', '--expires-in', '1d']);
    assert.equal(updated.code, 0, updated.stderr);
    assert.equal(updated.stdout, `Key ${id} updated.\n`);
    const json = JSON.parse((await sluice(['keys', 'update', id, '--daily-usd', 'none', '--json'])).stdout) as Record<string, any>;
    assert.deepEqual([json.name, json.models, json.budgets.daily_usd], ['deploy', ['fast'], null]);
    assert.ok(json.expires_at);
    assert.equal((await chatWith(gw.url, key, { model: 'mock/echo' })).status, 403);

    assert.match((await sluice(['keys', 'disable', id])).stdout, new RegExp(`^Key ${id} disabled`));
    assert.match((await sluice(['keys', 'list', '--project', 'edits'])).stdout, new RegExp(`^${id} +edits +deploy +- +disabled `, 'm'));
    assert.equal((await chatWith(gw.url, key, { model: 'fast' })).body.error.code, 'api_key_disabled');
    assert.match((await sluice(['keys', 'enable', id])).stdout, new RegExp(`^Key ${id} enabled`));
    assert.equal((await chatWith(gw.url, key, { model: 'fast' })).status, 200);

    await refused(['projects', 'delete', 'edits'], 1, /answered 409: Project edits still has 1 live key/);
    assert.match((await sluice(['keys', 'delete', id])).stdout, new RegExp(`^Key ${id} deleted`));
    assert.equal((await chatWith(gw.url, key, { model: 'fast' })).status, 401);
    assert.ok(!(await sluice(['keys', 'list', '--project', 'edits'])).stdout.includes(id));
    assert.match((await sluice(['keys', 'list', '--project', 'edits', '--deleted'])).stdout, new RegExp(`^${id} .* deleted `, 'm'));

    const project = await sluice(['projects', 'update', 'edits', '--name', 'Edited', '--tier', 'none', '--metadata', '{"owner":"ops"}', '--json']);
    assert.equal(project.code, 0, project.stderr);
    assert.deepEqual((JSON.parse(project.stdout) as Record<string, any>).metadata, { owner: 'ops' });

    await sluice(['endpoints', 'create', '--project', 'edits', '--name', 'chat', '--model', 'fast', '--usage', 'always']);
    const endpoint = await sluice(['endpoints', 'update', '--project', 'edits', '--name', 'chat', '--model', 'mock/echo', '--usage', 'none']);
    assert.equal(endpoint.stdout, 'Endpoint /edits/chat/v1 updated.\n');
    assert.match((await sluice(['endpoints', 'list', '--project', 'edits'])).stdout, /^edits +chat +mock\/echo +- +- +- /m);
    const cache = await sluice([
      'endpoints',
      'update',
      '--project',
      'edits',
      '--name',
      'chat',
      '--cache-ttl',
      '60',
      '--cache-max-bytes',
      '4096',
      '--json',
    ]);
    assert.deepEqual((JSON.parse(cache.stdout) as Record<string, any>).cache, { ttl_s: 60, max_bytes: 4096 });
    const off = await sluice(['endpoints', 'update', '--project', 'edits', '--name', 'chat', '--cache-ttl', 'none', '--json']);
    assert.equal((JSON.parse(off.stdout) as Record<string, any>).cache, null);
    await refused(
      ['endpoints', 'update', '--project', 'edits', '--name', 'chat', '--cache-max-bytes', '10'],
      2,
      /--cache-max-bytes needs --cache-ttl/,
    );
    assert.equal((await sluice(['endpoints', 'delete', '--project', 'edits', '--name', 'chat'])).stdout, 'Endpoint /edits/chat/v1 deleted.\n');
    assert.match((await sluice(['projects', 'delete', 'edits'])).stdout, /^Project edits deleted; its requests and spend stay/);
    assert.ok(!(await sluice(['projects', 'list'])).stdout.includes('edits'));
  });

  it('refuses an update with nothing to change, and a field the API refuses, in one line', async () => {
    await refused(['keys', 'update', 'ffffffffffffffff'], 2, /^sluice keys update: name at least one field to change/);
    await refused(['projects', 'update', 'p', '--metadata', 'owner=ops'], 2, /--metadata must be a JSON object/);
    await refused(['keys', 'update', 'ffffffffffffffff', '--name', 'x'], 1, /answered 404: No key with id ffffffffffffffff\./);
    await refused(['endpoints', 'delete', '--project', 'p'], 2, /--project and --name are required/);
  });

  it('prints usage for --help at every level', async () => {
    for (const [args, pattern] of [
      [['keys', '--help'], /^Usage: sluice keys create --project P/],
      [['keys', 'create', '--help'], /^Usage: sluice keys create/],
      [['projects'], /^Usage: sluice projects create <name>/],
      [['help', 'endpoints'], /^Usage: sluice endpoints create/],
      [['--help'], /sluice keys create\|list\|update\|disable\|enable\|revoke\|rotate\|delete/],
      [['keys', 'update', '--help'], /sluice keys update <key_id>/],
      [['projects', 'delete', '--help'], /sluice projects delete <id> \[--force\]/],
      [['endpoints', 'update', '--help'], /sluice endpoints update --project P --name N/],
    ] as const) {
      const result = await sluice([...args]);
      assert.equal(result.code, 0, args.join(' '));
      assert.match(result.stdout, pattern, args.join(' '));
    }
  });

  it("answers an operator's mistakes with one line: exit 2 for the command line, 1 for what the gateway refused", async () => {
    await refused(['keys', 'create'], 2, /^sluice keys create: --project is required .*See sluice keys --help\.$/);
    await refused(
      ['keys', 'mint'],
      2,
      /^sluice keys: unknown subcommand "mint" \(create, list, update, disable, enable, revoke, rotate, delete\)\. See sluice keys --help\.$/,
    );
    await refused(['keys', 'create', '--project', 'p', '--expires-in', 'soon'], 2, /--expires-in must be a duration/);
    await refused(['keys', 'create', '--projet', 'p'], 2, /unknown option --projet \(did you mean --project\?\)/);
    await refused(['keys', 'revoke'], 2, /^sluice keys revoke: name the key id/);
    await refused(['keys', 'list'], 1, /refused the key in SLUICE_MASTER_KEY \(401\)/, 'not-the-master-key');
    await sluice(['projects', 'create', 'Plain', '--id', 'plain']);
    const plain = (await sluice(['keys', 'create', '--project', 'plain'])).stdout.trim();
    await refused(['keys', 'list'], 1, /\(403\): the admin API needs the master key or a key created with --admin/, plain);
    await refused(['keys', 'create', '--project', 'nowhere'], 1, /answered 404: No project with id nowhere\./);
    await refused(['keys', 'revoke', 'ffffffffffffffff'], 1, /answered 404: No key with id ffffffffffffffff\./);
  });
});
