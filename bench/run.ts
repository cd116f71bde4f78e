/**
 * `npm run bench`: the same 20-chunk streamed load sent straight to a fake upstream and through
 * sluice, alternating, in a fast mode (CPU cost) and a paced mode (added latency); also through a
 * minimal reference proxy, the yardstick for sluice's CPU and latency figures. The fake
 * upstream, the gateway and the reference proxy are children; this process generates the load.
 * docs/benchmarks/index.md says how to read the output.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Agent, request } from 'undici';
import { type BenchChild, decidePinning, startChild } from './children.ts';
import { foreignCores, markLoad } from './machine-load.ts';
import { type PhaseOptions, type PhaseResult, runPhase, type Target } from './load.ts';
import { type BenchMode, type BenchOptions, parseOptions, USAGE } from './options.ts';
import { anthropicMessages, MASTER_KEY, openAIChat, openAIUnary } from './requests.ts';
import { admissionCost } from './admission-cost.ts';
import { formatLedgerPage, ledgerPageBench } from './ledger-paging.ts';
import { type CpuProfile, formatProfileSummary, summarizeProfile } from './profile-summary.ts';
import { formatStageTable, stageCosts, type StageTable } from './stage-costs.ts';
import { type BenchResult, type Comparison, formatReport, type ModeResult, unarySummary } from './report.ts';
import { issueTargets } from './targets.ts';
import { telemetryCost } from './telemetry-cost.ts';
import { idleRss } from './idle-rss.ts';
import { loadedRss } from './loaded-rss.ts';
import { formatSoak, runSoak } from './soak.ts';
import type { ProcessSample } from './process-sample.ts';
import { type PhaseUsage, summarize } from './stats.ts';
import { TOKENS } from './upstream-frames.ts';

interface Ready {
  type: 'ready';
  port: number;
}

/** The gateway child's (gateway-process.ts): its keys, and the Redis-backed gateway or why there is none. */
interface GatewayReady extends Ready {
  /** The gateway the governed key is served by (its journal and export on; the plain one under --workers). */
  governedPort: number;
  governedKey: string;
  /** The same gateway with metrics and the log line off (not with --workers). */
  telemetryOffPort?: number;
  redis: { port: number; governedKey: string } | { skipped: string };
}

interface ComparisonSpec {
  label: string;
  direct: Target;
  /** The same request as direct, through the bare pass-through proxy: the floor every figure is divided by. */
  bare: Target;
  sluice: Target;
  /** The same load through the reference proxy (the OpenAI-compatible row only). */
  reference?: Target;
  /** Through sluice with a key on a governed tier (the OpenAI-compatible row only): limits in memory, and in Redis. */
  governed?: Target;
  governedRedis?: Target;
  /** Through sluice by a route of two targets, the first healthy (the OpenAI-compatible row). */
  routed?: Target;
  /** Through a gateway with metrics and the request log line off (the OpenAI-compatible row). */
  telemetryOff?: Target;
}

/**
 * Every proxy (gateway, reference, bare) runs without V8's memory reducer. The sides alternate, so
 * each proxy sits idle through the others' phases, and an idle V8 shrinks its heap, which the next
 * phase pays to grow back: whichever gateway side ran first after the idle gap paid it (quiet run,
 * fast mode: plain sluice 0.813 ms CPU/request against 0.738 routed and 0.748 with telemetry off,
 * which do more or the same; paced x64: 2.17 against 1.42 ms). Without the reducer the sides agree
 * (routed -0.8% of plain sluice), and the figures are a busy gateway's, which never idles between
 * bursts like that. `--no-memory-reducer` is refused in NODE_OPTIONS, so it is a node argument.
 */
const PROXY_NODE_ARGS = ['--no-memory-reducer'];

interface Origins {
  upstream: string;
  gateway: string;
  reference: string;
  bare: string;
  /** The governed gateway, in memory, and its key. */
  governed: { origin: string; governedKey: string };
  telemetryOff?: string;
  /** The gateway that keeps limits in Redis, when Redis is reachable. */
  redis?: { origin: string; governedKey: string };
}

/** The fake upstream reads the pace from the model name (upstream-process.ts). */
const modelName = (paceMs: number) => (paceMs > 0 ? `bench-pace-${paceMs}` : 'bench-fast');

function comparisons(origins: Origins, paceMs: number, withAnthropic: boolean): ComparisonSpec[] {
  const { upstream, gateway } = origins;
  const model = modelName(paceMs);
  const specs: ComparisonSpec[] = [
    {
      label: 'OpenAI-compatible upstream',
      direct: openAIChat(upstream, model),
      bare: openAIChat(origins.bare, model),
      sluice: openAIChat(gateway, `up/${model}`),
      reference: openAIChat(origins.reference, `up/${model}`),
      governed: origins.governed.governedKey
        ? openAIChat(origins.governed.origin, `up/${model}`, origins.governed.governedKey)
        : undefined,
      governedRedis: origins.redis?.governedKey
        ? openAIChat(origins.redis.origin, `up/${model}`, origins.redis.governedKey)
        : undefined,
      // gateway-process.ts routes `route-{model}` to up/{model}, then a second target never needed.
      routed: openAIChat(gateway, `route-${model}`),
      telemetryOff: origins.telemetryOff ? openAIChat(origins.telemetryOff, `up/${model}`) : undefined,
    },
  ];
  if (withAnthropic) {
    specs.push({
      label: 'Anthropic -> OpenAI translation',
      direct: anthropicMessages(upstream, model),
      // The floor of this row: the Anthropic upstream's bytes piped to an Anthropic client.
      bare: anthropicMessages(origins.bare, model),
      sluice: openAIChat(gateway, `anthropic/${model}`),
    });
  }
  return specs;
}

/** The boards' shape: one non-streaming row, direct, bare and sluice only. */
function unaryComparisons(origins: Origins): ComparisonSpec[] {
  const model = modelName(0);
  return [
    {
      label: 'OpenAI-compatible upstream, non-streaming',
      direct: openAIUnary(origins.upstream, model),
      bare: openAIUnary(origins.bare, model),
      sluice: openAIUnary(origins.gateway, `up/${model}`),
    },
  ];
}

async function healthzProviders(origin: string): Promise<string[]> {
  const res = await request(`${origin}/healthz`);
  const body = (await res.body.json()) as { providers?: string[] };
  return body.providers ?? [];
}

const sample = (child: BenchChild<Ready>) => child.ask<ProcessSample>({ type: 'sample' });
const cpuUs = (from: ProcessSample, to: ProcessSample) => to.userUs + to.systemUs - (from.userUs + from.systemUs);

interface Children {
  gateway: BenchChild<GatewayReady>;
  upstream: BenchChild<Ready>;
  reference: BenchChild<Ready>;
  bare: BenchChild<Ready>;
}

/**
 * One measured phase, with the CPU the upstream and the proxy in the middle (sluice or the
 * reference; none for direct phases) used during it, and the proxy's peak RSS.
 */
async function measured(target: Target, options: PhaseOptions, upstream: BenchChild<Ready>, proxy?: BenchChild<Ready>) {
  // An unmeasured lead-in (2 s, or half a short phase): connections (client and upstream pools)
  // and code warm again after the process sat idle through the other sides' phases. It shrank
  // the first-after-idle penalty but did not remove it; what did is running the proxies without
  // V8's memory reducer (PROXY_NODE_ARGS).
  await runPhase(target, { ...options, durationMs: Math.min(2000, options.durationMs / 2) });
  const [proxyBefore, upstreamBefore] = await Promise.all([proxy && sample(proxy), sample(upstream)]);
  const loadGenBefore = process.cpuUsage();
  const phase = await runPhase(target, options);
  const loadGen = process.cpuUsage(loadGenBefore);
  const [proxyAfter, upstreamAfter] = await Promise.all([proxy && sample(proxy), sample(upstream)]);
  const usage: PhaseUsage = {
    upstreamCpuUs: cpuUs(upstreamBefore, upstreamAfter),
    loadGenCpuUs: loadGen.user + loadGen.system,
    proxy:
      proxyBefore && proxyAfter
        ? {
            userUs: proxyAfter.userUs - proxyBefore.userUs,
            systemUs: proxyAfter.systemUs - proxyBefore.systemUs,
            requests: phase.timings.length,
            peakRss: proxyAfter.peakRss,
          }
        : undefined,
  };
  return { phase, usage };
}

/**
 * The CPU by stage of one side: a phase of its own with the gateway profiled (the measured
 * phases stay unprofiled), read by stage-costs.ts.
 */
async function stagePhase(
  label: string,
  target: Target,
  options: PhaseOptions,
  gateway: BenchChild<GatewayReady>,
  readsPerStream: number | undefined,
): Promise<StageTable> {
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-stages-')), 'gateway.cpuprofile');
  try {
    await runPhase(target, { ...options, durationMs: Math.min(2000, options.durationMs / 2) });
    await gateway.ask({ type: 'profile-start' });
    const phase = await runPhase(target, options);
    await gateway.ask({ type: 'profile-stop', path: file }, 60_000);
    const requests = phase.timings.length;
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    return {
      label,
      requests,
      reads: readsPerStream === undefined ? undefined : requests * readsPerStream,
      stages: stageCosts(profile, new URL('..', import.meta.url).href),
    };
  } finally {
    rmSync(dirname(file), { recursive: true, force: true });
  }
}

async function runMode(
  mode: BenchMode,
  concurrency: number,
  withStages: boolean,
  options: BenchOptions,
  children: Children,
  specs: (paceMs: number) => ComparisonSpec[],
  log: (line: string) => void,
): Promise<ModeResult> {
  const paceMs = mode === 'paced' ? options.paceMs : 0;
  const phaseSeconds = mode === 'paced' ? options.pacedSeconds : mode === 'unary' ? options.unarySeconds : options.fastSeconds;
  const dispatcher = new Agent({
    connections: concurrency,
    keepAliveTimeout: 60_000,
    keepAliveMaxTimeout: 60_000,
    headersTimeout: 15_000,
    bodyTimeout: 15_000,
  });
  const phase = (seconds: number): PhaseOptions => ({
    dispatcher,
    concurrency,
    durationMs: seconds * 1000,
    staggerMs: paceMs,
    validateEvery: 50,
  });
  const list = specs(paceMs);
  const newSide = () => ({ phases: [] as PhaseResult[], usage: [] as PhaseUsage[] });
  const collected = list.map(() => ({
    direct: newSide(),
    bare: newSide(),
    sluice: newSide(),
    reference: newSide(),
    governed: newSide(),
    governedRedis: newSide(),
    routed: newSide(),
    telemetryOff: newSide(),
  }));
  /** A comparison's sides in the order they run, each with the process in the middle. */
  /**
   * A comparison's sides in the order they run in round `round` (0 for the warm-up), each with the
   * process in the middle. The gateway's own sides take turns at going first: the first gateway
   * phase after the direct, bare and reference phases measured more CPU per request than the same
   * work later in the round, even with a lead-in and without the memory reducer (paced x64, a quiet
   * run: 1.84 ms for plain sluice, which ran first, against 1.47-1.76 ms for the sides after it).
   */
  const sidesOf = (spec: ComparisonSpec, round = 0) => {
    const present = <T extends readonly [string, Target | undefined, BenchChild<Ready> | undefined]>(sides: T[]) =>
      sides.filter((side): side is T & { 1: Target } => side[1] !== undefined);
    const gatewaySides = present([
      ['sluice', spec.sluice, children.gateway],
      ['governed', spec.governed, children.gateway],
      ['governedRedis', spec.governedRedis, children.gateway],
      ['routed', spec.routed, children.gateway],
      ['telemetryOff', spec.telemetryOff, children.gateway],
    ] as const);
    const turn = round % gatewaySides.length;
    return [
      ...present([
        ['direct', spec.direct, undefined],
        ['bare', spec.bare, children.bare],
        ['reference', spec.reference, children.reference],
      ] as const),
      ...gatewaySides.slice(turn),
      ...gatewaySides.slice(0, turn),
    ];
  };
  let sluiceRequests = 0;
  const stages: StageTable[] = [];
  const profileFile = options.profileDir ? join(options.profileDir, `gateway-${mode}-${concurrency}.cpuprofile`) : undefined;
  const benchPids = [process.pid, children.gateway.pid, children.upstream.pid, children.reference.pid, children.bare.pid];
  const name = `${mode} x${concurrency}`;
  const loadFrom = markLoad(benchPids);
  try {
    log(`${name}: warm-up ${options.warmupSeconds} s per side`);
    for (const spec of list) {
      for (const [, target] of sidesOf(spec)) await runPhase(target, phase(options.warmupSeconds));
    }
    if (profileFile) await children.gateway.ask({ type: 'profile-start' });
    for (let round = 1; round <= options.rounds; round++) {
      for (const [i, spec] of list.entries()) {
        const runs: [string, Awaited<ReturnType<typeof measured>>][] = [];
        for (const [side, target, proxy] of sidesOf(spec, round - 1)) {
          const run = await measured(target, phase(phaseSeconds), children.upstream, proxy);
          collected[i][side].phases.push(run.phase);
          collected[i][side].usage.push(run.usage);
          if (proxy === children.gateway) sluiceRequests += run.phase.timings.length;
          runs.push([side, run]);
        }
        log(
          `${name}: round ${round}/${options.rounds} ${spec.label}: ` +
            runs.map(([side, run]) => `${side} ${run.phase.timings.length} req`).join(', ') +
            `, errors ${runs.reduce((sum, [, run]) => sum + run.phase.errors, 0)}`,
        );
      }
    }
    if (profileFile) await children.gateway.ask({ type: 'profile-stop', path: profileFile }, 60_000);
    if (withStages) {
      // Paced, each chunk is its own read: the head, one per token, the tail.
      const readsPerStream = mode === 'paced' ? TOKENS.length + 2 : undefined;
      for (const [side, target] of [
        ['plain sluice', list[0].sluice],
        ['governed, in memory', list[0].governed],
      ] as const) {
        if (!target) continue;
        const label = `${name}, ${list[0].label}, ${side}`;
        stages.push(await stagePhase(label, target, phase(phaseSeconds), children.gateway, readsPerStream));
        log(`${name}: stage profile of ${side} done`);
      }
    }
  } finally {
    await dispatcher.close();
  }
  const loadTo = markLoad(benchPids);
  const comparisonResults: Comparison[] = list.map((spec, i) => ({
    label: spec.label,
    direct: summarize(collected[i].direct.phases, collected[i].direct.usage),
    bare: summarize(collected[i].bare.phases, collected[i].bare.usage),
    sluice: summarize(collected[i].sluice.phases, collected[i].sluice.usage),
    reference: spec.reference ? summarize(collected[i].reference.phases, collected[i].reference.usage) : undefined,
    governed: spec.governed ? summarize(collected[i].governed.phases, collected[i].governed.usage) : undefined,
    governedRedis: spec.governedRedis
      ? summarize(collected[i].governedRedis.phases, collected[i].governedRedis.usage)
      : undefined,
    routed: spec.routed ? summarize(collected[i].routed.phases, collected[i].routed.usage) : undefined,
    telemetryOff: spec.telemetryOff ? summarize(collected[i].telemetryOff.phases, collected[i].telemetryOff.usage) : undefined,
  }));
  const profile = profileFile
    ? summarizeProfile(JSON.parse(readFileSync(profileFile, 'utf8')) as CpuProfile, { top: 25, requests: sluiceRequests })
    : undefined;
  if (profileFile) log(`${name}: gateway profile in ${profileFile}`);
  return {
    mode,
    concurrency,
    paceMs,
    phaseSeconds,
    rounds: options.rounds,
    comparisons: comparisonResults,
    otherLoadCores: loadFrom && loadTo ? foreignCores(loadFrom, loadTo) : undefined,
    profile,
    stages: stages.length > 0 ? stages : undefined,
  };
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  if (options === 'help') {
    console.log(USAGE);
    return 0;
  }
  const log = (line: string) => process.stderr.write(`${line}\n`);
  if (options.soak) {
    const soak = await runSoak({ ...options.soak, log });
    console.log(options.json ? JSON.stringify(soak, null, 2) : formatSoak(soak));
    return soak.pass ? 0 : 1;
  }
  const pinning = decidePinning(options.pin);
  log(`pinning: ${pinning.note}`);
  log(
    `ledger: ${options.ledger ? `on (embedded SQLite file${options.durableLedger ? ', durable: its journal too' : ''})` : 'off (--no-ledger)'}`,
  );
  // Before anything else runs: a start on a quiet machine.
  const idle = await idleRss();
  log(`idle: sluice serve --workers 1, RSS 3 s after listening: ${idle.runs.map((r) => r.toFixed(1)).join(', ')} MiB`);

  const upstream = await startChild<Ready>('./upstream-process.ts', { core: pinning.loadCore });
  const upstreamOrigin = `http://127.0.0.1:${upstream.ready.port}`;
  if (options.profileDir) mkdirSync(options.profileDir, { recursive: true });
  // The ledger stays on (the default) and writes a real SQLite file, thrown away afterwards;
  // --no-ledger turns it off, for the ledger on/off comparison.
  const storeDir = mkdtempSync(join(tmpdir(), 'sluice-bench-'));
  process.on('exit', () => rmSync(storeDir, { recursive: true, force: true }));
  // N workers share the machine's cores with the load: pinning them to the gateway's one core would cap them at one.
  if (options.workers > 1) log(`gateway: ${options.workers} worker processes on one port, unpinned`);
  const gateway = await startChild<GatewayReady>(options.workers > 1 ? './gateway-workers.ts' : './gateway-process.ts', {
    core: options.workers > 1 ? undefined : pinning.gatewayCore,
    nodeArgs: PROXY_NODE_ARGS,
    // Two gateways and a key each, on one core of a machine that may be busy: seconds, not milliseconds.
    readyTimeoutMs: 60_000,
    env: {
      ...process.env,
      BENCH_UPSTREAM_URL: upstreamOrigin,
      BENCH_STORE_PATH: join(storeDir, 'sluice.db'),
      BENCH_LEDGER: options.ledger ? (options.durableLedger ? 'durable' : 'on') : 'off',
      BENCH_MASTER_KEY: MASTER_KEY,
      BENCH_MODELS: `${modelName(0)},${modelName(options.paceMs)}`,
      BENCH_REDIS_URL: process.env.REDIS_URL ?? '',
      BENCH_WORKERS: String(options.workers),
      // Enables sluice's native `anthropic` provider against the fake upstream, where it exists.
      ANTHROPIC_API_KEY: 'sk-ant-bench',
      ANTHROPIC_BASE_URL: upstreamOrigin,
    },
  });
  const gatewayOrigin = `http://127.0.0.1:${gateway.ready.port}`;
  // Pinned with the gateway: it runs only during its own phases, on the same core.
  const reference = await startChild<Ready>('./reference-proxy-process.ts', {
    core: pinning.gatewayCore,
    nodeArgs: PROXY_NODE_ARGS,
    env: { ...process.env, BENCH_UPSTREAM_URL: upstreamOrigin },
  });
  // The floor: pinned with the gateway too, and idle outside its own phases.
  const bare = await startChild<Ready>('./bare-proxy-process.ts', {
    core: pinning.gatewayCore,
    nodeArgs: PROXY_NODE_ARGS,
    env: { ...process.env, BENCH_UPSTREAM_URL: upstreamOrigin },
  });
  const redis = gateway.ready.redis;
  const origins: Origins = {
    upstream: upstreamOrigin,
    gateway: gatewayOrigin,
    reference: `http://127.0.0.1:${reference.ready.port}`,
    bare: `http://127.0.0.1:${bare.ready.port}`,
    governed: { origin: `http://127.0.0.1:${gateway.ready.governedPort}`, governedKey: gateway.ready.governedKey },
    telemetryOff: gateway.ready.telemetryOffPort ? `http://127.0.0.1:${gateway.ready.telemetryOffPort}` : undefined,
    redis: 'port' in redis ? { origin: `http://127.0.0.1:${redis.port}`, governedKey: redis.governedKey } : undefined,
  };
  const startRss = (await sample(gateway)).rss;
  const withAnthropic = (await healthzProviders(gatewayOrigin)).includes('anthropic');
  log(
    `gateway ${gatewayOrigin}, upstream ${upstreamOrigin}, anthropic row: ${withAnthropic ? 'yes' : 'no (no anthropic provider)'}`,
  );
  log(
    gateway.ready.governedKey
      ? `governed row: in memory, and ${'skipped' in redis ? `not with Redis: ${redis.skipped}` : 'with Redis'}`
      : 'governed row: skipped (--no-ledger: keys live in the store, which is off with the ledger)',
  );

  const modes: ModeResult[] = [];
  const concurrencies = { fast: options.concurrency, paced: options.pacedConcurrency, unary: options.unaryConcurrency };
  for (const mode of options.modes) {
    const specs = (paceMs: number) =>
      mode === 'unary' ? unaryComparisons(origins) : comparisons(origins, paceMs, withAnthropic);
    for (const [i, concurrency] of concurrencies[mode].entries()) {
      const withStages = options.stages && i === 0;
      modes.push(await runMode(mode, concurrency, withStages, options, { gateway, upstream, reference, bare }, specs, log));
    }
  }
  await gateway.stop();
  await reference.stop();
  await bare.stop();
  await upstream.stop();

  // Admission and settlement alone, in this process once the children are stopped: end to end the
  // governed row's difference also holds the key's HMAC, the rate-limit headers and the spend rows,
  // and moves by tens of µs between runs on a busy machine (docs/benchmarks/index.md).
  const admission = await admissionCost(undefined, 20_000);
  const admissionBusy = admission.runs.find((r) => r.inFlight === 32);
  log(
    `admission + settlement alone (bench/admission-cost.ts, in memory): ` +
      admission.runs.map((r) => `${r.governedCpuUs.toFixed(1)} µs CPU at ${r.inFlight} in flight`).join(', ') +
      (admission.problems.length > 0 ? ` (${admission.problems.length} problem(s) logged: not a clean measurement)` : ''),
  );
  // Metrics and the log line alone, the same way: a few tens of µs are within the noise of whole streams.
  const telemetry = await telemetryCost(50_000);
  log(
    `metrics + request log line alone (bench/telemetry-cost.ts): ${telemetry.cpuUs.toFixed(1)} µs CPU per request ` +
      `(metrics ${telemetry.metricsUs.toFixed(1)} µs)`,
  );
  // The memory figure under load, from the product as a user runs it (the bench's gateway process
  // runs the sources and three gateways): the paced mode's largest load through sluice serve.
  const pacedStreams = options.modes.includes('paced') ? Math.max(...options.pacedConcurrency) : undefined;
  const loaded =
    pacedStreams === undefined
      ? undefined
      : await loadedRss({
          streams: pacedStreams,
          paceMs: options.paceMs,
          seconds: options.pacedSeconds * 2,
          target: (origin) => openAIChat(origin, `up/${modelName(options.paceMs)}`),
          masterKey: MASTER_KEY,
          core: pinning.gatewayCore,
          upstreamCore: pinning.loadCore,
        });
  if (loaded) {
    log(
      `under load: sluice serve --workers 1, ${loaded.streams} paced streams: peak RSS ${loaded.peakMiB.toFixed(1)} MiB, ` +
        `${loaded.requests} requests, ${loaded.errors} errors`,
    );
  }
  // The request log on a large ledger, in this process too, with the machine to itself again.
  const ledgerPage =
    options.ledgerPageRows === undefined ? undefined : await ledgerPageBench({ rows: options.ledgerPageRows, log });
  const unary = unarySummary(modes);
  const result: BenchResult = {
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: pinning.cores,
    pinning:
      (pinning.enabled ? pinning.note : `none, ${pinning.note}`) +
      (options.workers > 1 ? `; gateway: ${options.workers} workers, unpinned` : ''),
    chunksPerResponse: TOKENS.length,
    governedRedisSkipped: 'skipped' in redis ? redis.skipped : undefined,
    gatewayStartRssMiB: startRss / (1024 * 1024),
    idle,
    loaded,
    modes,
    targets: issueTargets({
      modes,
      unary,
      idleRssMiB: idle.medianMiB,
      loaded,
      admissionUs: admissionBusy?.governedCpuUs,
      telemetryUs: telemetry.cpuUs,
    }),
    unary,
  };
  // Its own table and PASS/FAIL line (the 50 ms target of issue 14) under the report.
  if (options.json) console.log(JSON.stringify(ledgerPage ? { ...result, ledgerPage } : result, null, 2));
  else {
    console.log(formatReport(result));
    if (ledgerPage) console.log(`\n${formatLedgerPage(ledgerPage)}`);
    for (const table of modes.flatMap((m) => m.stages ?? [])) console.log(`\n${formatStageTable(table)}`);
    for (const m of modes) {
      if (m.profile)
        console.log(
          `\ngateway CPU profile, ${m.mode} mode x${m.concurrency}, measured phases\n${formatProfileSummary(m.profile)}`,
        );
    }
  }
  // A failing reference counts too: its CPU figure would be the cost of failing fast.
  const failed = modes.some((m) =>
    m.comparisons.some((c) =>
      [c.direct, c.bare, c.sluice, c.reference, c.governed, c.governedRedis, c.routed, c.telemetryOff].some(
        (side) => (side?.errors ?? 0) > 0,
      ),
    ),
  );
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  },
);
