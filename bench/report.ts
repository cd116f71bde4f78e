import type { IdleRss } from './idle-rss.ts';
import type { LoadedRss } from './loaded-rss.ts';
import type { ProfileSummary } from './profile-summary.ts';
import type { StageTable } from './stage-costs.ts';
import type { BenchMode } from './options.ts';
import type { Percentiles, SideResult } from './stats.ts';

/** The same load straight to the upstream and through sluice (and, on the OpenAI-compatible row, the reference proxy). */
export interface Comparison {
  label: string;
  direct: SideResult;
  /** Through bench/bare-proxy-process.ts (pipes bytes unchanged): the floor every proxy's figure is divided by. */
  bare?: SideResult;
  sluice: SideResult;
  /** Through bench/reference-proxy-process.ts: what a minimal proxy costs on this machine. */
  reference?: SideResult;
  /** Through sluice with a key on a tier with every limit and a budget, limits in memory (the OpenAI-compatible row). */
  governed?: SideResult;
  /** The same with the limits in Redis (a second gateway in the same process), when Redis was reachable. */
  governedRedis?: SideResult;
  /** Through a route of two targets whose first is healthy (the OpenAI-compatible row): what routing adds. */
  routed?: SideResult;
  /** Through a gateway with metrics and the request log line off (the OpenAI-compatible row). */
  telemetryOff?: SideResult;
}

export interface ModeResult {
  mode: BenchMode;
  concurrency: number;
  /** 0 in fast mode. */
  paceMs: number;
  phaseSeconds: number;
  rounds: number;
  comparisons: Comparison[];
  /** With --profile: where the gateway's CPU went during the measured phases. */
  profile?: ProfileSummary;
  /** CPU by stage in a profiled phase of its own, plain sluice and governed (the first run of each mode). */
  stages?: StageTable[];
  /** Cores' worth of CPU other processes on the machine used during this mode (Linux only). */
  otherLoadCores?: number;
}

export interface TargetCheck {
  name: string;
  /** Undefined when the mode it needs was not run. */
  measured: number | undefined;
  limit: number;
  /** `x`: a ratio; `share`: a fraction, printed as a percentage. */
  unit: 'ms' | 'µs' | 'x' | 'MiB' | 'share';
  /** The limit is a ceiling (`most`) or a floor (`least`). */
  at: 'most' | 'least';
  pass: boolean | undefined;
}

export interface BenchResult {
  node: string;
  cpu: string;
  cores: number;
  pinning: string;
  chunksPerResponse: number;
  /** Why the governed row has no Redis side (no REDIS_URL, Redis unreachable); undefined when it has one. */
  governedRedisSkipped?: string;
  /** The bench's gateway process (the TypeScript sources, three gateways) once listening, before any request. */
  gatewayStartRssMiB: number;
  /** `sluice serve --workers 1` as a user starts it, idle (idle-rss.ts). */
  idle: IdleRss;
  /** `sluice serve --workers 1` as a user runs it, under the paced mode's largest load (loaded-rss.ts). */
  loaded?: LoadedRss;
  modes: ModeResult[];
  targets: TargetCheck[];
  /** The unary mode's figures in the public gateway boards' terms, when it ran. */
  unary?: UnarySummary;
}

function withUnit(v: number, unit: TargetCheck['unit']): string {
  if (unit === 'share') return `${(v * 100).toFixed(1)}%`;
  if (unit === 'x') return `${v.toFixed(2)}x`;
  if (unit === 'MiB') return `${v.toFixed(0)} MiB`;
  return `${unit === 'ms' ? v.toFixed(3) : v.toFixed(1)} ${unit}`;
}

const ms = (v: number) => (Number.isNaN(v) ? '-' : v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : v.toFixed(0));
const signed = (v: number) => (v >= 0 ? `+${ms(v)}` : `-${ms(-v)}`);
const ratio = (s: number, d: number) => (d > 0 ? `${(s / d).toFixed(2)}x` : '-');

function table(rows: string[][], alignRight: boolean[]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const line = (r: string[]) =>
    `| ${r.map((cell, c) => (alignRight[c] ? cell.padStart(widths[c]) : cell.padEnd(widths[c]))).join(' | ')} |`;
  const rule = `|${widths.map((w, c) => (alignRight[c] ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  return [line(rows[0]), rule, ...rows.slice(1).map(line)].join('\n');
}

function comparisonTable(c: Comparison): string {
  const { direct: d, sluice: s } = c;
  const latency = (label: string, pick: (x: SideResult) => number) => [
    label,
    ms(pick(d)),
    ms(pick(s)),
    ratio(pick(s), pick(d)),
    signed(pick(s) - pick(d)),
  ];
  const rows = [
    [c.label, 'direct', 'sluice', 'sluice/direct', 'sluice-direct'],
    [
      'streamed requests/s',
      d.requestsPerSecond.toFixed(0),
      s.requestsPerSecond.toFixed(0),
      ratio(s.requestsPerSecond, d.requestsPerSecond),
      '',
    ],
    latency('TTFB p50 (ms)', (x) => x.ttfb.p50),
    latency('TTFB p99 (ms)', (x) => x.ttfb.p99),
    latency('TTFT p50 (ms)', (x) => x.ttft.p50),
    latency('TTFT p99 (ms)', (x) => x.ttft.p99),
    latency('total p50 (ms)', (x) => x.total.p50),
    latency('total p99 (ms)', (x) => x.total.p99),
    ['client reads/response', d.readsPerResponse.toFixed(1), s.readsPerResponse.toFixed(1), '', ''],
    ['fake upstream CPU ms/request', d.upstreamCpuMsPerRequest.toFixed(3), s.upstreamCpuMsPerRequest.toFixed(3), '', ''],
    ['sluice CPU ms/request', '', s.cpuMsPerRequest === undefined ? '-' : s.cpuMsPerRequest.toFixed(3), '', ''],
    ['  of which kernel', '', s.cpuSystemMsPerRequest === undefined ? '-' : s.cpuSystemMsPerRequest.toFixed(3), '', ''],
    ['  best phase', '', s.cpuMsPerRequestBest === undefined ? '-' : s.cpuMsPerRequestBest.toFixed(3), '', ''],
    ['sluice peak RSS (MiB)', '', s.peakRssMiB === undefined ? '-' : s.peakRssMiB.toFixed(1), '', ''],
    ['requests (errors)', `${d.requests} (${d.errors})`, `${s.requests} (${s.errors})`, '', ''],
  ];
  return table(rows, [false, true, true, true, true]);
}

/**
 * The reference proxy's cost: its CPU (and sluice's as a multiple of it), and the TTFT p50 it adds
 * over direct, next to sluice's: what any Node proxy costs on this machine.
 */
function referenceLines(c: Comparison): string[] {
  const r = c.reference;
  if (!r || r.cpuMsPerRequest === undefined) return [];
  const cpu = r.cpuMsPerRequest;
  const times = c.sluice.cpuMsPerRequest === undefined ? '-' : ratio(c.sluice.cpuMsPerRequest, cpu);
  const added = (x: SideResult) => signed(x.ttft.p50 - c.direct.ttft.p50);
  return [
    `reference: a minimal hand-written proxy (parse + re-serialize each chunk, same core) ` +
      `${cpu.toFixed(3)} ms CPU/request (kernel ${(r.cpuSystemMsPerRequest ?? Number.NaN).toFixed(3)}), ` +
      `${r.requestsPerSecond.toFixed(0)} req/s; sluice CPU = ${times} the reference`,
    `reference: TTFT p50 ${ms(r.ttft.p50)} ms, ${added(r)} over direct (sluice ${added(c.sluice)})`,
  ];
}

/**
 * Every proxied side against the bare pass-through of the same rounds (issue 15): CPU per request,
 * throughput, TTFT p50 added over the bare proxy's, and TTFT p99 as a multiple of its p99.
 */
export function floorLines(c: Comparison): string[] {
  const b = c.bare;
  if (!b || b.cpuMsPerRequest === undefined) return [];
  const sides: [string, SideResult | undefined][] = [
    ['bare pass-through', b],
    ['reference (parse + re-serialize)', c.reference],
    ['sluice', c.sluice],
    ['governed, in memory', c.governed],
    ['governed, Redis', c.governedRedis],
    ['routed', c.routed],
  ];
  const cpu = (x: SideResult) => x.cpuMsPerRequest ?? Number.NaN;
  const rows = [
    ['vs bare pass-through', 'CPU ms/req', 'x bare', 'req/s', 'x bare', 'TTFT p50', '- bare', 'TTFT p99', 'x bare'],
    ...sides
      .filter((side): side is [string, SideResult] => side[1] !== undefined)
      .map(([name, x]) => [
        name,
        cpu(x).toFixed(3),
        ratio(cpu(x), cpu(b)),
        x.requestsPerSecond.toFixed(0),
        ratio(x.requestsPerSecond, b.requestsPerSecond),
        ms(x.ttft.p50),
        signed(x.ttft.p50 - b.ttft.p50),
        ms(x.ttft.p99),
        ratio(x.ttft.p99, b.ttft.p99),
      ]),
  ];
  return [
    `bare pass-through (pipes bytes unchanged): TTFT p50 ${signed(b.ttft.p50 - c.direct.ttft.p50)} ms over direct, ` +
      `peak RSS ${(b.peakRssMiB ?? Number.NaN).toFixed(1)} MiB`,
    table(rows, [false, true, true, true, true, true, true, true, true]),
  ];
}

/** A proxy's best request rate per core over the unary sweep: requests per second of its own CPU. */
export interface PerCoreRate {
  perCore: number;
  atConcurrency: number;
  /** The rate the load actually reached at that concurrency (the proxy's core may not have been saturated). */
  requestsPerSecond: number;
}

/** The unary mode in the boards' terms (issue 15): added latency at the lowest concurrency, the best rate per core. */
export interface UnarySummary {
  /** The lowest concurrency of the sweep (1 by default), where the added latency is read. */
  concurrency: number;
  /** sluice's latency minus the bare pass-through's, p50 and p99 (ms). */
  addedMs: Percentiles;
  /** The bare pass-through's latency minus direct's: what the hop itself costs here. */
  bareOverDirectMs: Percentiles;
  bare: PerCoreRate;
  sluice: PerCoreRate;
  /** The load generator's own CPU, in cores, at its busiest point of the sweep. */
  loadGenCores: number;
}

export function unarySummary(modes: ModeResult[]): UnarySummary | undefined {
  const sweep = modes.filter((m) => m.mode === 'unary' && m.comparisons[0]?.bare);
  if (sweep.length === 0) return undefined;
  const lowest = sweep.reduce((a, b) => (b.concurrency < a.concurrency ? b : a));
  const { direct, bare, sluice } = lowest.comparisons[0];
  const minus = (a: SideResult, b: SideResult): Percentiles => ({
    p50: a.total.p50 - b.total.p50,
    p99: a.total.p99 - b.total.p99,
  });
  const best = (pick: (c: Comparison) => SideResult | undefined): PerCoreRate =>
    sweep
      .map((m) => {
        const x = pick(m.comparisons[0]);
        return {
          perCore: x?.cpuMsPerRequest ? 1000 / x.cpuMsPerRequest : 0,
          atConcurrency: m.concurrency,
          requestsPerSecond: x?.requestsPerSecond ?? 0,
        };
      })
      .reduce((a, b) => (b.perCore > a.perCore ? b : a));
  return {
    concurrency: lowest.concurrency,
    addedMs: minus(sluice, bare as SideResult),
    bareOverDirectMs: minus(bare as SideResult, direct),
    bare: best((c) => c.bare),
    sluice: best((c) => c.sluice),
    loadGenCores: Math.max(
      ...sweep.flatMap((m) => [m.comparisons[0].bare, m.comparisons[0].sluice].map((x) => x?.loadGenCores ?? 0)),
    ),
  };
}

function unaryLines(u: UnarySummary): string[] {
  const us = (v: number) => `${v >= 0 ? '+' : '-'}${Math.abs(v * 1000).toFixed(0)} µs`;
  const rate = (r: PerCoreRate) =>
    `${r.perCore.toFixed(0)} req/s per core at concurrency ${r.atConcurrency} (${r.requestsPerSecond.toFixed(0)} req/s reached)`;
  return [
    `unary mode, the boards' terms: sluice adds ${us(u.addedMs.p50)} at p50, ${us(u.addedMs.p99)} at p99 over the bare ` +
      `pass-through at concurrency ${u.concurrency} (the bare hop adds ${us(u.bareOverDirectMs.p50)} / ${us(u.bareOverDirectMs.p99)} over direct)`,
    `unary mode, best rate per core (requests per second of the proxy's own CPU): bare ${rate(u.bare)}; ` +
      `sluice ${rate(u.sluice)}, ${ratio(u.sluice.perCore, u.bare.perCore)} the bare pass-through's`,
    `unary mode: the load generator used up to ${u.loadGenCores.toFixed(2)} cores`,
  ];
}

/** What admission and settlement add: CPU per request (µs) and TTFT p50 over the plain sluice side of the same rounds. */
export function governedCost(
  c: Comparison,
  side: 'governed' | 'governedRedis',
): { cpuUs: number; bestCpuUs: number; ttftMs: number } | undefined {
  const g = c[side];
  if (!g || g.cpuMsPerRequest === undefined || c.sluice.cpuMsPerRequest === undefined) return undefined;
  return {
    cpuUs: (g.cpuMsPerRequest - c.sluice.cpuMsPerRequest) * 1000,
    // The least disturbed phase of each side: on a busy machine, the steadier of the two figures.
    bestCpuUs: ((g.cpuMsPerRequestBest ?? Number.NaN) - (c.sluice.cpuMsPerRequestBest ?? Number.NaN)) * 1000,
    ttftMs: g.ttft.p50 - c.sluice.ttft.p50,
  };
}

function governedLines(c: Comparison, redisSkipped: string | undefined): string[] {
  if (!c.governed) return [];
  const line = (name: string, side: 'governed' | 'governedRedis', extra = '') => {
    const g = c[side];
    const cost = governedCost(c, side);
    if (!g || !cost) return [];
    return [
      `${name}: ${(g.cpuMsPerRequest ?? Number.NaN).toFixed(3)} ms CPU/request, ${us(cost.cpuUs)} over plain sluice ` +
        `(best phases ${us(cost.bestCpuUs)}); ` +
        `TTFT p50 ${ms(g.ttft.p50)} ms, ${signed(cost.ttftMs)} ms over plain sluice${extra}; ${g.requests} requests (${g.errors} errors)`,
    ];
  };
  const overMemory =
    c.governed && c.governedRedis ? `, ${signed(c.governedRedis.ttft.p50 - c.governed.ttft.p50)} ms over in memory` : '';
  return [
    ...line('governed (key on a tier with limits and budgets), limits in memory', 'governed'),
    ...(c.governedRedis
      ? line('governed, limits in Redis', 'governedRedis', overMemory)
      : [`governed, limits in Redis: skipped, ${redisSkipped ?? 'not run'}`]),
  ];
}

/** What a two-target route adds over naming the target itself, in the same rounds (docs/routing.md). */
export function routedLines(c: Comparison): string[] {
  const r = c.routed;
  const d = r && cpuOver(r, c.sluice);
  if (!r || !d) return [];
  return [
    `two-target route, first target healthy: ${d.cpuMs.toFixed(3)} ms CPU/request, ${us(d.addedUs)} (${d.share}%) ` +
      `over naming the target (best phases ${us(d.bestUs)}); TTFT p50 ${ms(r.ttft.p50)} ms; ${r.requests} requests (${r.errors} errors)`,
  ];
}

/** What metrics and the request log line cost: the plain side over the telemetry-off side of the same rounds (issue 14: within 3%). */
export function telemetryLines(c: Comparison): string[] {
  const off = c.telemetryOff;
  const d = off && cpuOver(c.sluice, off);
  if (!off || off.cpuMsPerRequest === undefined || !d) return [];
  return [
    `metrics and request log line off: ${off.cpuMsPerRequest.toFixed(3)} ms CPU/request; with them (plain sluice) ` +
      `${us(d.addedUs)} (${d.share}%, best phases ${us(d.bestUs)}); ${off.requests} requests (${off.errors} errors)`,
  ];
}

/** Side `a`'s CPU per request over side `b`'s: the difference (mean and best phases, µs) and as a percentage. */
function cpuOver(a: SideResult, b: SideResult): { cpuMs: number; addedUs: number; bestUs: number; share: string } | undefined {
  if (a.cpuMsPerRequest === undefined || b.cpuMsPerRequest === undefined) return undefined;
  return {
    cpuMs: a.cpuMsPerRequest,
    addedUs: (a.cpuMsPerRequest - b.cpuMsPerRequest) * 1000,
    bestUs: ((a.cpuMsPerRequestBest ?? Number.NaN) - (b.cpuMsPerRequestBest ?? Number.NaN)) * 1000,
    share: ((a.cpuMsPerRequest / b.cpuMsPerRequest - 1) * 100).toFixed(1),
  };
}

const us = (v: number) => `${v >= 0 ? '+' : '-'}${Math.abs(v).toFixed(1)} µs`;

function modeHeading(m: ModeResult): string {
  const what =
    m.mode === 'fast'
      ? `fast mode (CPU cost): ${m.concurrency} streams in flight, no pacing`
      : m.mode === 'paced'
        ? `paced mode (added latency): ${m.concurrency} streams in flight, ${m.paceMs} ms between chunks`
        : `unary mode (non-streaming, 256-byte completions): ${m.concurrency} requests in flight`;
  const noise =
    m.otherLoadCores === undefined
      ? ''
      : `\nother processes on the machine used ${m.otherLoadCores.toFixed(2)} cores meanwhile${m.otherLoadCores > 0.1 ? ' (noisy run)' : ''}`;
  const first = m.comparisons[0];
  const sides = [
    'direct',
    first?.bare && 'bare',
    first?.reference && 'reference',
    'sluice',
    first?.governed && 'governed',
    first?.governedRedis && 'governed-redis',
    first?.routed && 'routed',
    first?.telemetryOff && 'telemetry-off',
  ]
    .filter(Boolean)
    .join('/');
  // The gateway's sides take turns at going first (run.ts sidesOf).
  return `${what}; ${m.rounds} x ${m.phaseSeconds} s per side, alternating ${sides} (the gateway's sides rotating)${noise}`;
}

export function formatReport(result: BenchResult): string {
  const out = [
    `sluice bench: Node ${result.node}, ${result.cores} cores (${result.cpu})`,
    `pinning: ${result.pinning}`,
    `each response: role chunk, ${result.chunksPerResponse} content chunks, finish, usage, [DONE]`,
    `idle: sluice serve --workers 1 (dist/, default config) RSS 3 s after listening: ${result.idle.medianMiB.toFixed(1)} MiB ` +
      `(median of ${result.idle.runs.map((r) => r.toFixed(1)).join(', ')})${result.idle.stale ? ` (${result.idle.stale})` : ''}`,
    `the bench's gateway process (sources, three gateways) once listening: ${result.gatewayStartRssMiB.toFixed(1)} MiB`,
  ];
  const l = result.loaded;
  if (l) {
    out.push(
      `under load: sluice serve --workers 1 (dist/, the SQLite ledger), ${l.streams} streams paced ${l.paceMs} ms: ` +
        `peak RSS ${l.peakMiB.toFixed(1)} MiB (${l.startMiB.toFixed(1)} once listening), ${l.cpuMsPerRequest.toFixed(3)} ms CPU per request, ` +
        `${l.requests} requests, ${l.errors} errors` +
        (l.stale ? ` (${l.stale})` : ''),
    );
  }
  for (const m of result.modes) {
    out.push('', modeHeading(m));
    for (const c of m.comparisons) {
      out.push('', comparisonTable(c));
      out.push(...referenceLines(c));
      out.push(...governedLines(c, result.governedRedisSkipped));
      out.push(...routedLines(c));
      out.push(...telemetryLines(c));
      out.push(...floorLines(c));
      for (const side of [
        'direct',
        'bare',
        'sluice',
        'reference',
        'governed',
        'governedRedis',
        'routed',
        'telemetryOff',
      ] as const) {
        for (const e of c[side]?.errorSamples ?? []) out.push(`  ${side} error: ${e}`);
      }
    }
  }
  if (result.unary) out.push('', ...unaryLines(result.unary));
  out.push(
    '',
    table(
      [
        ['target', 'measured', 'limit', ''],
        ...result.targets.map((t) => [
          t.name,
          t.measured === undefined ? 'not run' : withUnit(t.measured, t.unit),
          `${t.at === 'most' ? '<=' : '>='} ${withUnit(t.limit, t.unit)}`,
          t.pass === undefined ? '-' : t.pass ? 'PASS' : 'FAIL',
        ]),
      ],
      [false, true, true, false],
    ),
  );
  return out.join('\n');
}
