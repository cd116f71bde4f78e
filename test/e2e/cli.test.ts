import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

const bin = fileURLToPath(new URL('../../bin/sluice.js', import.meta.url));

// Run from an empty folder: a `sluice serve` that gets as far as opening its store writes there.
const cwd = mkdtempSync(join(tmpdir(), 'sluice-cli-'));
after(() => rmSync(cwd, { recursive: true, force: true }));

/**
 * Runs the real `sluice` command with a clean environment (no provider keys, no DATABASE_URL).
 * A serve loads its token encodings before it binds: seconds on a busy machine, hence the bound.
 */
function sluice(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { cwd, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** An operator's mistake: exit code, and exactly one line on stderr matching `pattern`, no stack trace. */
async function refused(args: string[], code: number, pattern: RegExp, env: Record<string, string> = {}) {
  const result = await sluice(args, env);
  assert.equal(result.code, code, result.stderr);
  const lines = result.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, result.stderr);
  assert.match(lines[0], pattern);
  assert.equal(result.stdout, '');
}

/** A loopback port nothing listens on (just released). */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
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

  it("prints each command's usage for --help / -h and exits 0; --version / -v print the package version", async () => {
    const cases: [string[], RegExp][] = [
      [['--help'], /^sluice: an OpenAI-compatible LLM gateway/],
      [['serve', '--help'], /^Usage: sluice serve \[--port N\]/],
      [['serve', '-h'], /^Usage: sluice serve /],
      [['logs', '--help'], /^Usage: sluice logs \[--follow\]/],
      [['spend', '--help'], /^Usage: sluice spend \[--group-by G\]/],
      [['pricing', '--help'], /^Usage: sluice pricing <provider\/model\|alias>/],
      [['help', 'logs'], /^Usage: sluice logs /],
      [['audit', '--help'], /^Usage: sluice audit \[--url URL\]/],
      [['reconcile', '--help'], /^Usage: sluice reconcile --provider NAME /],
      [['config', '--help'], /^Usage: sluice config check \[FILE\]/],
      [['help', 'config'], /^Usage: sluice config check /],
    ];
    for (const [args, usage] of cases) {
      const { code, stdout, stderr } = await sluice(args);
      assert.equal(code, 0, args.join(' '));
      assert.match(stdout, usage, args.join(' '));
      assert.equal(stderr, '');
    }
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const flag of ['--version', '-v']) assert.deepEqual(await sluice([flag]), { code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('answers a bad command line with one line pointing to --help, exit 2', async () => {
    await refused(['serve', '--prot', '9000'], 2, /^sluice serve: unknown option --prot \(did you mean --port\?\)\. See sluice serve --help\.$/);
    await refused(['serve', '--port'], 2, /^sluice serve: .*--port.*argument missing\. See sluice serve --help\.$/);
    await refused(['serve', '--port', 'eighty'], 2, /^sluice serve: --port must be a whole number from 0 to 65535, not "eighty"\./);
    await refused(['logs', '--limit', '0'], 2, /^sluice logs: --limit must be a whole number from 1 to 1000, not "0"\./);
    await refused(['pricing', 'openai/gpt-4o', '--input', '1.5'], 2, /^sluice pricing: --input must be a whole number/);
    await refused(['pricing'], 2, /^sluice pricing: name one model/);
    await refused(['config'], 2, /^sluice config: name a subcommand: check\. See sluice config --help\.$/);
    await refused(['config', 'lint'], 2, /^sluice config: unknown subcommand "lint" \(subcommands: check\)\. See sluice config --help\.$/);
    await refused(['config', 'check', 'a.yaml', 'b.yaml'], 2, /^sluice config check: name one config file/);
    await refused(['config', 'check', '--strict'], 2, /^sluice config: unknown option --strict\. See sluice config --help\.$/);
    await refused(
      ['frobnicate'],
      2,
      /^sluice: unknown command "frobnicate" \(commands: serve, config, pricing, logs, spend, audit, reconcile, check, projects, keys, endpoints\)\. See sluice --help\.$/,
    );
  });

  it('names a missing or invalid config file in one line, exit 1', async () => {
    const missing = join(cwd, 'missing.yaml');
    await refused(['serve', '--config', missing], 1, new RegExp(`^sluice: Config file not found: ${missing}$`));
    await refused(['serve'], 1, /^sluice: Config file not found: /, { SLUICE_CONFIG: missing });
    const typo = join(cwd, 'typo.yaml');
    writeFileSync(typo, 'server:\n  prot: 9000\n');
    await refused(['serve', '--config', typo], 1, new RegExp(`^sluice: ${typo}: unknown key server\\.prot \\(did you mean server\\.port\\?\\)$`));
    const unset = join(cwd, 'unset.yaml');
    writeFileSync(unset, 'providers:\n  groq:\n    api_key: ${GROQ_API_KEY}\n');
    await refused(['pricing', 'groq/x', '--config', unset], 1, /providers\.groq\.api_key uses \$\{GROQ_API_KEY\}, which is not set/);
  });

  it('sluice config check: one line saying what would serve, exit 0, without opening the store or a port', async () => {
    const good = join(cwd, 'check-good.yaml');
    const store = join(cwd, 'check-good', 'sluice.db');
    writeFileSync(
      good,
      `store:\n  path: ${store}\nproviders:\n  groq:\n    api_key: \${GROQ_API_KEY}\nmodel_list:\n  - model_name: fast\n    model: groq/llama\n` +
        'routes:\n  smart:\n    targets:\n      - model: groq/llama\n      - model: mock/echo\n' +
        'tiers:\n  free:\n    requests_per_minute: 10\ndefault_tier: free\n',
    );
    const ok = await sluice(['config', 'check', good], { GROQ_API_KEY: 'gsk-test' });
    assert.deepEqual(ok, {
      code: 0,
      stdout: `${good}: ok: 2 providers enabled (mock, groq), 1 route, 1 alias, 1 tier (default: free)\n`,
      stderr: '',
    });
    assert.equal(existsSync(store), false, 'the check opened no store');
    // SLUICE_CONFIG names the file when the command line does not.
    assert.equal((await sluice(['config', 'check'], { SLUICE_CONFIG: good, GROQ_API_KEY: 'gsk-test' })).code, 0);
    const none = await sluice(['config', 'check']);
    assert.equal(none.code, 0);
    assert.match(none.stdout, /^no config file \(the defaults and the environment\): ok: 1 provider enabled \(mock\), 0 routes/);
  });

  it('sluice config check: every problem on its own line with its key path and the fix, exit 1', async () => {
    const schema = join(cwd, 'check-schema.yaml');
    writeFileSync(schema, 'server:\n  prot: 9000\n  port: eighty\nproviders:\n  groq:\n    api_key: ${GROQ_API_KEY}\n    base_url: ${GROQ_URL}\n');
    const unset = await sluice(['config', 'check', schema]);
    assert.equal(unset.code, 1);
    assert.equal(unset.stdout, '');
    assert.deepEqual(unset.stderr.trimEnd().split('\n'), [
      `${schema}: providers.groq.api_key uses \${GROQ_API_KEY}, which is not set: export GROQ_API_KEY, or write \${GROQ_API_KEY:-} to allow it empty (\${GROQ_API_KEY:-value} for a default).`,
      `${schema}: providers.groq.base_url uses \${GROQ_URL}, which is not set: export GROQ_URL, or write \${GROQ_URL:-} to allow it empty (\${GROQ_URL:-value} for a default).`,
      `${schema}: 2 problems: sluice serve would not start with it.`,
    ]);
    const typed = await sluice(['config', 'check', schema], { GROQ_API_KEY: 'k', GROQ_URL: 'http://127.0.0.1:9/v1' });
    const lines = typed.stderr.trimEnd().split('\n');
    assert.equal(typed.code, 1);
    assert.equal(lines.length, 3, typed.stderr);
    assert.match(lines[0], new RegExp(`^${schema}: server\\.port: .*expected number`));
    assert.match(lines[1], new RegExp(`^${schema}: unknown key server\\.prot \\(did you mean server\\.port\\?\\)$`));

    // What only the gateway's start checked: declared servers, routes' targets, an open host without a key.
    const gateway = join(cwd, 'check-gateway.yaml');
    writeFileSync(
      gateway,
      'server:\n  host: 0.0.0.0\nproviders:\n  vllm:\n    api_key: k\nroutes:\n  smart:\n    targets:\n      - model: mock/echo\n' +
        '  other:\n    targets:\n      - model: anthropic/claude\n      - model: nowhere/m\n',
    );
    const start = await sluice(['config', 'check', gateway]);
    assert.equal(start.code, 1);
    assert.deepEqual(start.stderr.trimEnd().split('\n'), [
      `${gateway}: server.host: 0.0.0.0 is not a loopback address and there is no master key: set SLUICE_MASTER_KEY (or auth.master_key), or bind to 127.0.0.1.`,
      `${gateway}: providers.vllm: a server that is not a preset needs base_url (and type: openai-compatible).`,
      `${gateway}: 2 problems: sluice serve would not start with it.`,
    ]);
    writeFileSync(gateway, 'routes:\n  other:\n    targets:\n      - model: anthropic/claude\n      - model: nowhere/m\n');
    const routes = await sluice(['config', 'check', gateway]);
    assert.deepEqual(routes.stderr.trimEnd().split('\n'), [
      `${gateway}: routes.other.targets[0] (anthropic/claude): provider 'anthropic' is not configured: set ANTHROPIC_API_KEY or add it to the config file.`,
      `${gateway}: routes.other.targets[1] (nowhere/m): no provider named 'nowhere' (configured: mock).`,
      `${gateway}: 2 problems: sluice serve would not start with it.`,
    ]);
    const absent = join(cwd, 'absent.yaml');
    assert.deepEqual(await sluice(['config', 'check', absent]), {
      code: 1,
      stdout: '',
      stderr: `Config file not found: ${absent}\n${absent}: 1 problem: sluice serve would not start with it.\n`,
    });
  });

  it('says the port is in use in one line instead of a stack trace, exit 1', async () => {
    const busy = createServer().listen(0, '127.0.0.1');
    await once(busy, 'listening');
    try {
      const { port } = busy.address() as AddressInfo;
      const config = join(cwd, 'memory.yaml');
      writeFileSync(config, "store:\n  path: ':memory:'\n");
      await refused(
        ['serve', '--port', String(port), '--config', config],
        1,
        new RegExp(`^sluice: 127\\.0\\.0\\.1:${port} is already in use: .*--port`),
      );
    } finally {
      busy.close();
    }
  });

  it('a half-migrated store (tables present, the migrations table gone) is a clear start-up error naming the state and the fix, exit 1, not retried forever', async () => {
    const store = join(cwd, 'half-migrated.db');
    const config = join(cwd, 'half-migrated.yaml');
    writeFileSync(config, `store:\n  path: ${store}\n`);
    const db = new DatabaseSync(store);
    // sluice's first table, as a copy without kysely_migration leaves it.
    db.exec('CREATE TABLE ledger (request_id text primary key)');
    db.close();
    await refused(
      ['serve', '--port', '0', '--workers', '1', '--config', config],
      1,
      new RegExp(`^sluice: The SQLite file ${store} holds sluice's tables \\(ledger\\) but no record of the migrations .*Restore kysely_migration`),
    );
  });

  it('says in one line that no gateway answers, or that it refused the key (sluice logs), exit 1', async () => {
    const port = await freePort();
    await refused(
      ['logs', '--url', `http://127.0.0.1:${port}`],
      1,
      /^sluice: no sluice answering at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\): start one with `sluice serve`/,
    );
    await refused(['logs'], 1, new RegExp(`^sluice: no sluice answering at http://127\\.0\\.0\\.1:${port} `), { PORT: String(port) });
    await refused(
      ['logs', '--url', gw.url],
      1,
      /refused the key in SLUICE_MASTER_KEY \(401\): set SLUICE_MASTER_KEY to the gateway's master key\.$/,
      {
        SLUICE_MASTER_KEY: 'wrong',
      },
    );
    await refused(['logs', '--url', gw.url], 1, /refused a request without a key \(401\)/);
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
    assert.match(lines[1], new RegExp(`${ids[1]}  mock/error  error:upstream_error  `));
    // --model takes the name the client used, not only the provider's model id.
    const echo = await sluice(['logs', '--url', gw.url, '--model', 'mock/echo'], { SLUICE_MASTER_KEY: KEY });
    assert.equal(echo.code, 0);
    assert.deepEqual(
      echo.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('  ')[1]),
      [ids[0]],
    );
  });
});
