/**
 * sluice's real server (createGateway, default config: ledger on, in an embedded SQLite file at
 * `BENCH_STORE_PATH`) in its own process, with one OpenAI-compatible provider `up` on the fake
 * upstream (`BENCH_UPSTREAM_URL`). The environment can enable more providers (the bench sets
 * ANTHROPIC_BASE_URL/ANTHROPIC_API_KEY). Answers CPU/RSS samples over IPC, and records a CPU
 * profile between `profile-start` and `profile-stop` (so that startup and warm-up stay out of
 * it); stops when the parent closes the channel.
 *
 * Governed requests (docs/benchmarks/index.md "The governed row"): the master key `BENCH_MASTER_KEY`
 * authenticates the plain requests; a key issued through the admin API, on the tier `bench`
 * (governed-tier.ts: every limit and budgets, never reached), those that go through admission
 * and settlement, on a gateway of their own in this same process (same JIT state, same CPU
 * account) with what a governed deployment turns on beside limits (issue 29): the ledger's
 * journal of records and of running requests, and the analytics export of every row to an OTLP
 * collector (the fake upstream answers as one); the requests carry two tags (requests.ts). With
 * `BENCH_REDIS_URL`, a second such gateway keeps the limits in Redis, with a key of its own. Under
 * --workers the plain gateway serves the governed key too (a worker's gateways share one port),
 * without the journal and the export.
 *
 * The telemetry-off side (issue 14's 3% target): a third gateway in this process with the same
 * config but metrics off and the log level silent, so that no request line is built; the plain
 * side's difference from it is what metrics and the log line cost end to end.
 */
import cluster from 'node:cluster';
import { openSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { createClient } from '@redis/client';
import { configSchema } from '../src/config/schema.ts';
import { createGateway, type Gateway } from '../src/server/app.ts';
import { logDestination } from '../src/telemetry/logger.ts';
import { BENCH_PRICES, BENCH_TIER, benchRedisPrefix, deleteBenchKeys } from './governed-tier.ts';
import { answerSamples } from './process-sample.ts';

const upstream = process.env.BENCH_UPSTREAM_URL;
const storePath = process.env.BENCH_STORE_PATH;
const masterKey = process.env.BENCH_MASTER_KEY;
if (!upstream || !storePath || !masterKey)
  throw new Error('BENCH_UPSTREAM_URL, BENCH_STORE_PATH and BENCH_MASTER_KEY must be set');

const redisPrefix = benchRedisPrefix();
/** The models the bench asks for (run.ts), priced. */
const models = (process.env.BENCH_MODELS ?? '').split(',').filter(Boolean);

/**
 * The ledger: on (the default), off (--no-ledger), or durable (--durable-ledger, and always on a
 * governed gateway: the journal of records and of running requests, README "Ledger durability"),
 * a journal per gateway and process (a journal is one process's: under --workers each worker has
 * its own). A governed gateway also exports every row (docs/operations/analytics-export.md).
 */
function ledgerConfig(path: string, governed: boolean) {
  const mode = process.env.BENCH_LEDGER;
  const journal = { journal: join(dirname(path), `${basename(path)}-journal-${process.pid}`) };
  if (!governed) return mode === 'durable' ? { enabled: true, ...journal } : { enabled: mode !== 'off' };
  return { enabled: true, ...journal, export: { endpoint: `${upstream}/v1/logs` } };
}

interface Side {
  redisUrl?: string;
  /** Metrics and the request log line (off: the telemetry-off side). */
  telemetry?: boolean;
  /** The journal and the analytics export on, and a key on the bench tier issued. */
  governed?: boolean;
}

function gatewayConfig(path: string, { redisUrl, telemetry = true, governed = false }: Side) {
  return configSchema.parse({
    ...(!telemetry && { metrics: { enabled: false }, log: { level: 'silent' } }),
    // A worker of gateway-workers.ts binds the port its first worker got.
    // Every connection of the load is one client's (127.0.0.1): no per-client cap below the global one.
    server: { host: '127.0.0.1', port: Number(process.env.BENCH_WORKER_PORT ?? 0), max_connections_per_client: 10_000 },
    auth: { master_key: masterKey },
    store: { path },
    ledger: ledgerConfig(path, governed),
    providers: { up: { base_url: `${upstream}/v1`, api_key: 'sk-bench' } },
    pricing: Object.fromEntries(models.map((model) => [`up/${model}`, BENCH_PRICES])),
    // The routed side (run.ts): a two-target route per model whose first target is healthy.
    routes: Object.fromEntries(
      models.map((model) => [`route-${model}`, { targets: [{ model: `up/${model}` }, { model: `up/${model}-fallback` }] }]),
    ),
    tiers: { bench: BENCH_TIER },
    // A busy machine must not trip the timeout: a request admitted without Redis (fail_open) would cost nothing.
    limits: { redis_url: redisUrl, redis_prefix: redisPrefix, redis_timeout_ms: 10_000 },
  });
}

/** A project and a key on the bench tier, through the admin API as an operator would (the plaintext). */
async function issueKey(origin: string): Promise<string> {
  const admin = async (path: string, body: unknown) => {
    const res = await fetch(`${origin}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${masterKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status !== 201) throw new Error(`${path}: HTTP ${res.status} ${text}`);
    return JSON.parse(text) as { key?: string };
  };
  await admin('/admin/projects', { id: 'bench', name: 'bench' });
  const created = await admin('/admin/keys', { project: 'bench', tier: 'bench', name: 'bench' });
  if (!created.key) throw new Error('/admin/keys: no key in the answer');
  return created.key;
}

/** Undefined when Redis answers a PING, else why not (the Redis row is then skipped). */
async function redisUnreachable(url: string): Promise<string | undefined> {
  const client = createClient({ url, socket: { connectTimeout: 2_000, reconnectStrategy: false } });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    return undefined;
  } catch (err) {
    return `Redis at ${url} is not reachable (${(err as Error).message})`;
  } finally {
    if (client.isOpen) client.destroy();
  }
}

const gateways: Gateway[] = [];
async function serve(path: string, side: Side, issuesKey = side.governed === true): Promise<{ port: number; key: string }> {
  // The request log lines are written (their CPU is part of sluice's) to /dev/null, not the bench's
  // terminal, batched as `sluice serve` writes them to stderr. An open descriptor: a path opens
  // asynchronously, and pino's flush at exit throws on a destination not yet ready.
  const gateway = createGateway(gatewayConfig(path, side), process.env, undefined, logDestination(openSync('/dev/null', 'w')));
  gateways.push(gateway);
  const address: AddressInfo = await gateway.listen({ reusePort: cluster.isWorker });
  // Workers share one store: the first issues the key, the others find it there. Keys live in the
  // store, which --no-ledger turns off with the ledger: no key, and no governed side, then.
  const first = (process.env.BENCH_WORKER_SLOT ?? '0') === '0';
  const issues = issuesKey && first && process.env.BENCH_LEDGER !== 'off';
  return { port: address.port, key: issues ? await issueKey(`http://127.0.0.1:${address.port}`) : '' };
}

// Under --workers every gateway of a worker binds the one shared port: the plain one alone, which
// then serves the governed key as well.
const plain = await serve(storePath, {}, cluster.isWorker);
const governed = cluster.isWorker ? plain : await serve(`${storePath}-governed`, { governed: true });
const redisUrl = process.env.BENCH_REDIS_URL;
const redisSkipped = redisUrl ? await redisUnreachable(redisUrl) : 'no REDIS_URL (or limits.redis_url) set';
const redis = redisSkipped ? undefined : await serve(`${storePath}-redis`, { redisUrl, governed: true });
const untelemetered = cluster.isWorker ? undefined : await serve(`${storePath}-quiet`, { telemetry: false });

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  setTimeout(() => process.exit(0), 3000).unref();
  await Promise.all(gateways.map((g) => g.shutdown(0)));
  if (redis && redisUrl) await deleteBenchKeys(redisUrl, redisPrefix).catch(() => {});
  process.exit(0);
}

let profiler: Session | undefined;
process.on('message', async (msg: { type: string; id?: number; path?: string }) => {
  if (msg.type === 'profile-start') {
    profiler = new Session();
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
  } else if (msg.type === 'profile-stop' && profiler && msg.path) {
    const { profile } = await profiler.post('Profiler.stop');
    writeFileSync(msg.path, JSON.stringify(profile));
    profiler.disconnect();
    profiler = undefined;
  } else return;
  process.send?.({ type: msg.type, id: msg.id });
});

answerSamples();
process.on('disconnect', () => void stop());
process.send?.({
  type: 'ready',
  port: plain.port,
  governedPort: governed.port,
  governedKey: governed.key,
  telemetryOffPort: untelemetered?.port,
  redis: redis ? { port: redis.port, governedKey: redis.key } : { skipped: redisSkipped },
});
