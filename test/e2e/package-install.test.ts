import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Installing needs the npm registry (the tarball's dependencies are not all in a fresh npm cache),
 * so this runs only when asked: `npm run check:pack`.
 */
const skip = process.env.SLUICE_CHECK_PACK ? false : 'installs from the npm registry: run `npm run check:pack`';

/** PATH without the repository's node_modules/.bin: an installed sluice must find its own Node. */
const systemPath = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((dir) => !dir.startsWith(join(root, 'node_modules')))
  .join(delimiter);

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      command,
      args,
      { cwd, env: { PATH: systemPath, HOME: process.env.HOME, ...env }, timeout: 180_000, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('the npm package', { skip }, () => {
  const work = mkdtempSync(join(tmpdir(), 'sluice-pack-'));
  let tarball = '';
  let files: string[] = [];
  const children: ChildProcess[] = [];
  before(async () => {
    // `npm pack` runs prepack (the build) first: a type error fails it here, as it would a publish.
    const packed = await run('npm', ['pack', '--json', '--pack-destination', work], root, {
      PATH: `${join(root, 'node_modules/.bin')}${delimiter}${systemPath}`,
    });
    assert.equal(packed.code, 0, packed.stderr + packed.stdout);
    const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
    tarball = join(work, info.filename);
    files = info.files.map((f) => f.path);
  });
  after(() => {
    for (const child of children) child.kill('SIGKILL');
    rmSync(work, { recursive: true, force: true });
  });

  it('holds what runs and nothing else (no sources, tests or fixtures)', () => {
    for (const file of ['bin/sluice.js', 'dist/cli/main.js', 'dist/accounting/token-counter-worker.js', 'LICENSE', 'README.md']) {
      assert.ok(files.includes(file), file);
    }
    // Type declarations ship for the one importable module, sluice/client, and nowhere else.
    assert.ok(files.includes('dist/client/index.d.ts'), 'dist/client/index.d.ts');
    // The console's bundle (docs/console.md), built by vite.
    assert.ok(files.includes('dist/console-ui/index.html'), 'dist/console-ui/index.html');
    const extra = files.filter(
      (f) =>
        !/^(dist\/.+\.js|dist\/client\/.+\.d\.ts|dist\/console-ui\/.+|bin\/sluice\.js|LICENSE|README\.md|package\.json)$/.test(f) ||
        f.includes('.test.'),
    );
    assert.deepEqual(extra, []);
  });

  it('installs into an empty folder and serves with `npx sluice serve`', { timeout: 240_000 }, async () => {
    const app = join(work, 'app');
    mkdirSync(app);
    const installed = await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], app);
    assert.equal(installed.code, 0, installed.stderr);
    const help = await run('npx', ['--no-install', 'sluice', '--help'], app);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /sluice serve \[--port N\]/);
    // The exported stream reader imports from the installed package (a browser-safe module).
    const reader = await run(
      'node',
      ['--input-type=module', '-e', "const m = await import('sluice/client'); console.log(typeof m.readStream, typeof m.readStreamText)"],
      app,
    );
    assert.equal(reader.code, 0, reader.stderr);
    assert.equal(reader.stdout.trim(), 'function function');

    const config = join(app, 'sluice.yaml');
    writeFileSync(config, `store:\n  path: ${join(app, 'sluice.db')}\n`);
    const server = spawn('npx', ['--no-install', 'sluice', 'serve'], {
      cwd: app,
      detached: true,
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { PATH: systemPath, HOME: process.env.HOME, PORT: '0', SLUICE_CONFIG: config },
    });
    children.push(server);
    const exited = new Promise<number | null>((resolve) => server.once('exit', resolve));
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "listening" line within 60 s: ${out}`)), 60_000);
      server.stdout?.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        const match = /sluice listening on (http:\/\/\S+)/.exec(out);
        if (!match) return;
        clearTimeout(timer);
        resolve(match[1]);
      });
    });
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock/echo', messages: [{ role: 'user', content: 'from the package' }] }),
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { choices: { message: { content: string } }[]; usage: { prompt_tokens: number } };
    assert.equal(body.choices[0].message.content, 'You said: from the package');
    assert.ok(body.usage.prompt_tokens > 0);

    // As a terminal or a supervisor would: the whole group (npx, its shell, node).
    process.kill(-(server.pid as number), 'SIGTERM');
    await exited;
    assert.match(out, /SIGTERM: draining/);
    await assert.rejects(fetch(`${url}/v1/models`), 'the port is closed');
  });

  it('installs globally and runs from the prefix bin, on the bundled Node when the system one is older', { timeout: 240_000 }, async (t) => {
    const prefix = join(work, 'global');
    const installed = await run('npm', ['install', '--global', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball], work);
    assert.equal(installed.code, 0, installed.stderr);
    const help = await run(join(prefix, 'bin/sluice'), ['--help'], work);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /sluice serve \[--port N\]/);
    const node = await run('node', ['--version'], work);
    t.diagnostic(`system node: ${node.stdout.trim()}`);
  });
});
