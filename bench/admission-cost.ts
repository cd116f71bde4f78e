/**
 * What the admit step of a governed request costs, measured in this process: `admissionCost()`
 * (run by `npm run bench` for its governed target, and by `npx node bench/admission.ts`).
 * Runs admit + settle alone for a key on the governed row's tier (governed-tier.ts: requests and
 * tokens per minute and concurrency, per key and per project, a key's daily and a project's
 * monthly budget), in memory and (with REDIS_URL) in Redis, and prints the CPU per request of
 * this process (the gateway's share; Redis's own CPU is not counted) against the same calls for a
 * caller without a tier. Sequential (one at a time: the latency of one admission) and 32 at a
 * time (what a busy gateway sees: Redis commands pipelined). `npm run bench`'s governed row
 * measures the same end to end, around real streams, where a few µs are within the noise.
 */
import { ledgerRecord } from '../test/helpers/ledger-records.ts';
import { PricingRegistry } from '../src/accounting/pricing.ts';
import { configSchema } from '../src/config/schema.ts';
import { LimitsAndBudgets } from '../src/governance/admit.ts';
import type { AdmissionRequest, Caller } from '../src/admission/admission.ts';
import type { ResolvedModel } from '../src/providers/registry.ts';
import { openDatabase } from '../src/store/open-database.ts';
import { BENCH_PRICES, BENCH_TIER, benchRedisPrefix, deleteBenchKeys } from './governed-tier.ts';

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

async function build(redisUrl: string | undefined, problems: string[]) {
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
      problems.push(m);
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
async function measure(
  limits: LimitsAndBudgets,
  tier: string | null,
  inFlight: number,
  REQUESTS: number,
): Promise<{ cpu: number; wall: number }> {
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

export interface AdmissionCost {
  inFlight: number;
  /** CPU µs per admit + settle for a key on the governed tier. */
  governedCpuUs: number;
  /** The same calls for a caller without a tier (what every request pays). */
  plainCpuUs: number;
  wallUs: number;
}

/**
 * admit + settle, `requests` times per run, sequentially and 32 in flight, for a caller on the
 * governed tier and one without a tier; in memory, or in Redis with `redisUrl`. `problems` are
 * the limits' log lines (Redis unavailable...): a run with any is not a measurement.
 */
export async function admissionCost(
  redisUrl: string | undefined,
  requests: number,
): Promise<{ runs: AdmissionCost[]; problems: string[] }> {
  const problems: string[] = [];
  const { limits, close } = await build(redisUrl, problems);
  const runs: AdmissionCost[] = [];
  try {
    // Warm-up (JIT, limiter and window setup), then the measured runs.
    await measure(limits, 'bench', 1, requests);
    for (const inFlight of [1, 32]) {
      const plain = await measure(limits, null, inFlight, requests);
      const governed = await measure(limits, 'bench', inFlight, requests);
      runs.push({ inFlight, governedCpuUs: governed.cpu, plainCpuUs: plain.cpu, wallUs: governed.wall });
    }
  } finally {
    await close();
  }
  return { runs, problems };
}
