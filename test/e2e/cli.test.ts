import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

const bin = fileURLToPath(new URL('../../bin/sluice.js', import.meta.url));

/** Runs the real `sluice` command with a clean environment (no provider keys, no DATABASE_URL). */
function sluice(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 15_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('the sluice command', () => {
  let gw: TestGateway;
  const KEY = 'sk-cli-master';
  before(async () => {
    gw = await startGateway({ auth: { master_key: KEY }, ledger: { flush_interval_ms: 10 } });
  });
  after(async () => {
    await gw.close();
  });

  it('refuses to serve on a non-loopback address without a key, and says how to fix it', async () => {
    const { code, stderr } = await sluice(['serve', '--host', '0.0.0.0', '--port', '0']);
    assert.equal(code, 1);
    assert.match(stderr, /Refusing to listen on 0\.0\.0\.0 without a key: set SLUICE_MASTER_KEY/);
  });

  it('prints what a model costs and where the price comes from', async () => {
    const known = await sluice(['pricing', 'openai/gpt-4o-mini', '--input', '1000000', '--output', '1000000']);
    assert.equal(known.code, 0);
    assert.match(known.stdout, /source: {2}registry \(@pydantic\/genai-prices model gpt-4o-mini\)/);
    assert.match(known.stdout, /cost of 1000000 input \(0 cached\) \+ 1000000 output tokens: \$0\.75000000/);
    const unknown = await sluice(['pricing', 'qwen/qwen3-max']);
    assert.match(unknown.stdout, /price: {3}unknown: requests are recorded with cost 0\.0 and price_known false/);
  });

  it('lists the recent requests of a running gateway (sluice logs)', async () => {
    const ids: string[] = [];
    for (const model of ['mock/echo', 'mock/error']) {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
        body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hello' }] }),
      });
      await res.text();
      ids.push(res.headers.get('x-request-id') ?? '');
    }
    const { code, stdout } = await sluice(['logs', '--url', gw.url], { SLUICE_MASTER_KEY: KEY });
    assert.equal(code, 0);
    const lines = stdout.trim().split('\n');
    assert.equal(lines.length, 2);
    assert.match(lines[0], new RegExp(`${ids[0]}  mock/echo  ok  \\d+->\\d+  \\$0\\.000000`));
    assert.match(lines[1], new RegExp(`${ids[1]}  mock/error  error:mock_failure  `));
  });
});
