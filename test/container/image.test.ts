import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseSse } from '../helpers/gateway.ts';
import { adminQuery, createTestSchema, databaseUrl, noPostgres, type TestSchema } from '../helpers/postgres.ts';
import { podman, podmanMissing, run, ULIMITS } from './podman.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const redisUrl = process.env.REDIS_URL;

/** Building the image takes minutes of both cores: only when asked (.ci/run asks once podman is installed). */
const skip =
  (process.env.SLUICE_CONTAINER_TEST === '1'
    ? false
    : 'SLUICE_CONTAINER_TEST is not set: the container image test is skipped (.ci/run sets it once podman is installed)') ||
  podmanMissing ||
  noPostgres ||
  (redisUrl ? false : 'REDIS_URL not set: the container image test is skipped');

const TAG = 'localhost/sluice:test';
const MASTER_KEY = `sk-test-${randomBytes(8).toString('hex')}`;
const MAX_IMAGE_BYTES = 250_000_000;

describe('the container image', { skip }, () => {
  const name = `sluice-test-${process.pid}-${randomBytes(3).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'sluice-container-'));
  let schema: TestSchema;
  let url = '';
  /** The script's lines about the base and the image: how long each took, how big. */
  let measured: string[] = [];

  before(
    async () => {
      // The repository's script, as an operator runs it; layers already built are reused.
      const built = await run('nice', ['-n', '10', join(root, 'scripts/container/build-image.sh'), TAG], 40 * 60_000);
      assert.equal(built.code, 0, built.stderr.slice(-4000));
      measured = built.stderr.split('\n').filter((line) => /^(base|image) /.test(line));
      schema = await createTestSchema();
      const config = join(dir, 'sluice.yaml');
      writeFileSync(
        config,
        [
          'providers: { mock: {} }',
          // A tier, so that limits go through Redis (keys of this run only).
          'default_tier: standard',
          'tiers: { standard: { requests_per_minute: 1000 } }',
          `limits: { redis_prefix: "sluice-test:${name}:" }`,
        ].join('\n'),
      );
      const started = await podman([
        'run',
        '--detach',
        '--name',
        name,
        '--network=host',
        '--read-only',
        ...ULIMITS,
        '--volume',
        `${config}:/etc/sluice/sluice.yaml:ro`,
        // Loopback only, on the host's network, at a port free now (not PORT=0: the HEALTHCHECK
        // reads PORT); PostgreSQL and Redis from the environment.
        '--env',
        'HOST=127.0.0.1',
        '--env',
        `PORT=${await freePort()}`,
        '--env',
        'SLUICE_CONFIG=/etc/sluice/sluice.yaml',
        '--env',
        `SLUICE_MASTER_KEY=${MASTER_KEY}`,
        '--env',
        `DATABASE_URL=${schema.url}`,
        '--env',
        `REDIS_URL=${redisUrl}`,
        TAG,
      ]);
      assert.equal(started.code, 0, started.stderr);
      url = await listeningUrl(name);
    },
    { timeout: 45 * 60_000 },
  );

  after(async () => {
    await podman(['rm', '--force', '--volumes', name]);
    await schema?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is at most 250 MB', async (t) => {
    const inspected = await podman(['image', 'inspect', '--format', '{{.Size}}', TAG]);
    const size = Number(inspected.stdout.trim());
    for (const line of measured) t.diagnostic(line);
    assert.ok(size > 0 && size <= MAX_IMAGE_BYTES, `${size} bytes`);
  });

  it('runs as a non-root user, on a read-only root filesystem, with /data writable', async () => {
    assert.equal((await podman(['exec', name, 'id', '-u'])).stdout.trim(), '10001');
    const root = await podman(['exec', name, 'touch', '/app/written']);
    assert.notEqual(root.code, 0);
    assert.match(root.stderr, /Read-only file system/);
    assert.equal((await podman(['exec', name, 'touch', '/data/written'])).code, 0, 'the volume is writable');
  });

  it('is ready on the PostgreSQL and Redis of its environment, and its HEALTHCHECK passes', async () => {
    const res = await fetch(`${url}/readyz`);
    assert.deepEqual(await res.json().then(withoutWorkerPid), {
      status: 'ready',
      checks: {
        store: { state: 'ok', engine: 'postgres' },
        redis: { state: 'ok' },
        providers: { state: 'ok', enabled: ['mock'] },
        mcp: { state: 'off' },
        provider_keys: { state: 'off' },
      },
    });
    assert.equal(res.status, 200);
    const health = await podman(['healthcheck', 'run', name]);
    assert.equal(health.code, 0, health.stdout + health.stderr);
  });

  it('drains on SIGTERM: a stream in flight ends cleanly, its ledger row is in PostgreSQL, and it exits 0', async () => {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${MASTER_KEY}` },
      // The mock's `slow` scenario: 500 ms between tokens, so SIGTERM lands mid-stream.
      body: JSON.stringify({
        model: 'mock/slow',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'one two three four five six' }],
      }),
    });
    assert.equal(res.status, 200);
    const requestId = res.headers.get('x-request-id') ?? '';
    const reader = (res.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    let signalled = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
      if (!signalled && text.includes('"content":"You')) {
        signalled = true;
        const killed = await podman(['kill', '--signal', 'TERM', name]);
        assert.equal(killed.code, 0, killed.stderr);
      }
    }
    assert.ok(signalled, 'SIGTERM was sent mid-stream');
    const frames = parseSse(text).frames.map((f) => f.data);
    assert.equal(frames.at(-1), '[DONE]');
    const chunks = frames.slice(0, -1).map((data) => JSON.parse(data));
    assert.equal(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join(''), 'You said: one two three four five six');
    assert.ok(chunks.some((c) => c.choices[0]?.finish_reason === 'stop'));
    assert.equal(chunks.at(-1).usage.completion_tokens > 0, true);

    const waited = await podman(['wait', name], 90_000);
    assert.equal(waited.stdout.trim(), '0', 'exit code');
    const logs = await podman(['logs', name]);
    assert.match(logs.stdout + logs.stderr, /SIGTERM: draining/);
    const { rows } = await adminQuery(databaseUrl ?? '', `SELECT outcome, finish_reason, streamed FROM ${schema.name}.ledger WHERE request_id = $1`, [
      requestId,
    ]);
    assert.deepEqual(rows, [{ outcome: 'ok', finish_reason: 'stop', streamed: 1 }]);
  });
});

/** A port nothing listens on now, as the kernel picks them. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The origin sluice announces once every worker listens, from the container's log. */
async function listeningUrl(name: string): Promise<string> {
  const deadline = Date.now() + 90_000;
  let output = '';
  while (Date.now() < deadline) {
    const logs = await podman(['logs', name]);
    output = logs.stdout + logs.stderr;
    const match = /sluice listening on (http:\/\/\S+)/.exec(output);
    if (match) return match[1];
    const state = await podman(['inspect', '--format', '{{.State.Running}}', name]);
    if (state.stdout.trim() === 'false') break;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the container did not listen:\n${output}`);
}

function withoutWorkerPid(body: unknown): unknown {
  const { worker_pid: _, ...rest } = body as Record<string, unknown>;
  return rest;
}
