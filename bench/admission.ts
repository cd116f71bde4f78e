/**
 * What the admit step of a governed request costs: `npx node bench/admission.ts [--requests N]`.
 * Runs admit + settle alone for a key on the governed row's tier (governed-tier.ts: requests and
 * tokens per minute and concurrency, per key and per project, a key's daily and a project's
 * monthly budget), in memory and (with REDIS_URL) in Redis, and prints the CPU per request of
 * this process (the gateway's share; Redis's own CPU is not counted) against the same calls for a
 * caller without a tier. Sequential (one at a time: the latency of one admission) and 32 at a
 * time (what a busy gateway sees: Redis commands pipelined). `npm run bench`'s governed row
 * measures the same end to end, around real streams, where a few µs are within the noise.
 */
import { parseArgs } from 'node:util';
import { ledgerRecord } from '../test/helpers/ledger-records.ts';
import { PricingRegistry } from '../src/accounting/pricing.ts';
import { configSchema } from '../src/config/schema.ts';
import { LimitsAndBudgets } from '../src/governance/admit.ts';
import type { AdmissionRequest, Caller } from '../src/pipeline/admit.ts';
import type { ResolvedModel } from '../src/providers/registry.ts';
import { openDatabase } from '../src/store/open-database.ts';
import { BENCH_PRICES, BENCH_TIER, benchRedisPrefix, deleteBenchKeys } from './governed-tier.ts';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '20000' } } });
const REQUESTS = Number(values.requests);
const KEYS = 100;

const target = { provider: 'up', model: 'gpt-test', requested: 'up/gpt-test' } as ResolvedModel;
const request = {
  model: 'up/gpt-test',
  messages: [{ role: 'user' as const, content: 'Write one short sentence about the sea.' }],
  max_tokens: 256,
};
// What settle() reads of a finished request: its cost and tokens.
const record = ledgerRecord({
  createdAt: Date.now(),
  provider: 'up',
  model: 'gpt-test',
  requestedModel: 'up/gpt-test',
  inputTokens: 14,
  outputTokens: 40,
  costUsd: 0.000054,
  ttftMs: 100,
  latencyMs: 400,
});

function caller(i: number, tier: string | null): Caller {
  return { keyId: `k${i % KEYS}`, projectId: `p${i % 10}`, tier, allowedModels: null, admin: false, budgets: [] };
}

async function build(redisUrl: string | undefined) {
  const prefix = benchRedisPrefix();
  const config = configSchema.parse({
    pricing: { 'up/gpt-test': BENCH_PRICES },
    // A busy machine must not trip the timeout: a request admitted without Redis would cost nothing here.
    limits: { redis_url: redisUrl, redis_prefix: prefix, redis_timeout_ms: 10_000 },
    tiers: { bench: BENCH_TIER },
  });
  const limits = new LimitsAndBudgets(config, {
    pricing: new PricingRegistry(config.pricing),
    log: (m) => {
      problems++;
      console.error(m);
    },
  });
  await limits.start();
  const db = await openDatabase({ path: ':memory:' });
  limits.attachStore(db.db);
  const close = async () => {
    await limits.close();
    await db.close();
    if (redisUrl) await deleteBenchKeys(redisUrl, prefix);
  };
  return { limits, close };
}

/** CPU µs and wall µs per admit+settle, `inFlight` at a time. */
async function measure(limits: LimitsAndBudgets, tier: string | null, inFlight: number): Promise<{ cpu: number; wall: number }> {
  let next = 0;
  const one = async () => {
    while (next < REQUESTS) {
      const i = next++;
      const req: AdmissionRequest = {
        requestId: `r${i}`,
        caller: caller(i, tier),
        surface: 'chat',
        target,
        request,
        streamed: true,
      };
      const admission = await limits.admit(req);
      admission.settle({ ...record, requestId: req.requestId });
    }
  };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: inFlight }, one));
  const wall = (performance.now() - t0) * 1000;
  const cpu = process.cpuUsage(cpu0);
  return { cpu: (cpu.user + cpu.system) / REQUESTS, wall: wall / REQUESTS };
}

const fmt = (n: number) => n.toFixed(1).padStart(7);
/** Log lines from the limits (Redis unavailable...): a run with any is not a measurement. */
let problems = 0;

async function report(name: string, redisUrl: string | undefined): Promise<void> {
  const { limits, close } = await build(redisUrl);
  // Warm-up (JIT, limiter and window setup), then the measured runs.
  await measure(limits, 'bench', 1);
  for (const inFlight of [1, 32]) {
    const plain = await measure(limits, null, inFlight);
    const governed = await measure(limits, 'bench', inFlight);
    console.log(
      `${name.padEnd(7)} ${String(inFlight).padStart(3)} in flight: admit+settle ${fmt(governed.cpu)} µs CPU ` +
        `(${fmt(governed.cpu - plain.cpu)} µs more than no tier), ${fmt(governed.wall)} µs wall per request`,
    );
  }
  await close();
}

console.log(`admission cost, ${REQUESTS} requests per run, ${KEYS} keys, the governed tier of npm run bench (governed-tier.ts)`);
await report('memory', undefined);
if (process.env.REDIS_URL) await report('redis', process.env.REDIS_URL);
else console.log('redis   skipped: REDIS_URL not set');
if (problems > 0) console.log(`${problems} problem(s) logged above: the figures are not a clean measurement`);
process.exit(problems > 0 ? 1 : 0);
