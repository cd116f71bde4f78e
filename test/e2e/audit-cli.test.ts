import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { projectWithKey } from '../helpers/admin-client.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

const bin = fileURLToPath(new URL('../../bin/sluice.js', import.meta.url));
const cwd = mkdtempSync(join(tmpdir(), 'sluice-audit-cli-'));
after(() => rmSync(cwd, { recursive: true, force: true }));

const MASTER = 'sk-master-audit-cli';

describe('sluice audit', () => {
  let gw: TestGateway;
  let key: Record<string, any>;
  before(async () => {
    gw = await startGateway({ auth: { master_key: MASTER } });
    key = await projectWithKey(gw.url, MASTER, 'team-a', { name: 'ci' });
    const revoke = await fetch(`${gw.url}/admin/keys/${key.id}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(revoke.status, 200);
  });
  after(() => gw?.close());

  function sluice(args: string[], secret: string | undefined = MASTER): Promise<{ code: number; stdout: string; stderr: string }> {
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', SLUICE_URL: gw.url };
    if (secret) env.SLUICE_MASTER_KEY = secret;
    return new Promise((resolve) => {
      execFile(process.execPath, [bin, ...args], { cwd, env, timeout: 60_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });
  }

  it('prints the recent entries oldest first, one a line, with the changed fields and never a secret', async () => {
    const { code, stdout, stderr } = await sluice(['audit']);
    assert.equal(code, 0, stderr);
    const lines = stdout.trimEnd().split('\n');
    assert.equal(lines.length, 3, stdout);
    assert.match(lines[0], /^\S+Z {2}master {2}project\.create {2}project team-a {2}127\.0\.0\.1 {2}\S+ {2}object="sluice\.project", id="team-a"/);
    assert.match(lines[1], new RegExp(`^\\S+Z  master  key\\.create  key ${key.id}  `));
    assert.match(lines[2], /key\.revoke .* status: "active" -> "revoked", revoked_at: null -> "/);
    assert.ok(!stdout.includes(key.key.slice(-43)));
  });

  it('filters, limits and prints the JSON with --json', async () => {
    const filtered = await sluice(['audit', '--action', 'key.revoke', '--target-id', key.id, '--json']);
    assert.equal(filtered.code, 0, filtered.stderr);
    const entries = JSON.parse(filtered.stdout) as { action: string; target: { id: string } }[];
    assert.deepEqual(
      entries.map((e) => [e.action, e.target.id]),
      [['key.revoke', key.id]],
    );
    const limited = await sluice(['audit', '--limit', '1']);
    assert.match(limited.stdout.trim(), /key\.revoke/);
    assert.equal(limited.stdout.trim().split('\n').length, 1);
  });

  it('says what is wrong in one line: a bad filter, a wrong key', async () => {
    const bad = await sluice(['audit', '--from', 'yesterday']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^sluice: \S+ answered 400: from must be an ISO 8601 date/);
    const wrong = await sluice(['audit'], 'sk-wrong');
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /refused the key in SLUICE_MASTER_KEY \(401\)/);
  });
});
