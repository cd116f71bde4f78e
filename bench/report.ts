import type { ProfileSummary } from './profile-summary.ts';
import type { SideResult } from './stats.ts';

/** The same load straight to the upstream and through sluice (and, on the OpenAI-compatible row, the reference proxy). */
export interface Comparison {
  label: string;
  direct: SideResult;
  sluice: SideResult;
  /** Through bench/reference-proxy-process.ts: what a minimal proxy costs on this machine. */
  reference?: SideResult;
  /** Through sluice with a key on a tier with every limit and a budget, limits in memory (the OpenAI-compatible row). */
  governed?: SideResult;
  /** The same with the limits in Redis (a second gateway in the same process), when Redis was reachable. */
  governedRedis?: SideResult;
  /** Through a route of two targets whose first is healthy (the OpenAI-compatible row): what routing adds. */
  routed?: SideResult;
}

export interface ModeResult {
  mode: 'fast' | 'paced';
  concurrency: number;
  /** 0 in fast mode. */
  paceMs: number;
  phaseSeconds: number;
  rounds: number;
  comparisons: Comparison[];
  /** With --profile: where the gateway's CPU went during the measured phases. */
  profile?: ProfileSummary;
  /** Cores' worth of CPU other processes on the machine used during this mode (Linux only). */
  otherLoadCores?: number;
}

export interface TargetCheck {
  name: string;
  /** Undefined when the mode it needs was not run. */
  measuredMs: number | undefined;
  limitMs: number;
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
  /** The gateway's RSS once listening, before any request. */
  gatewayStartRssMiB: number;
  modes: ModeResult[];
  targets: TargetCheck[];
}

export function checkTarget(name: string, measuredMs: number | undefined, limitMs: number): TargetCheck {
  return { name, measuredMs, limitMs, pass: measuredMs === undefined ? undefined : measuredMs <= limitMs };
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
    const us = (v: number) => `${v >= 0 ? '+' : '-'}${Math.abs(v).toFixed(1)} µs`;
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

/** What a two-target route adds over naming the target itself, in the same rounds (README "Routes and fallback"). */
export function routedLines(c: Comparison): string[] {
  const r = c.routed;
  if (!r || r.cpuMsPerRequest === undefined || c.sluice.cpuMsPerRequest === undefined) return [];
  const addedUs = (r.cpuMsPerRequest - c.sluice.cpuMsPerRequest) * 1000;
  const share = ((r.cpuMsPerRequest / c.sluice.cpuMsPerRequest - 1) * 100).toFixed(1);
  const bestUs = ((r.cpuMsPerRequestBest ?? Number.NaN) - (c.sluice.cpuMsPerRequestBest ?? Number.NaN)) * 1000;
  const us = (v: number) => `${v >= 0 ? '+' : '-'}${Math.abs(v).toFixed(1)} µs`;
  return [
    `two-target route, first target healthy: ${r.cpuMsPerRequest.toFixed(3)} ms CPU/request, ${us(addedUs)} (${share}%) ` +
      `over naming the target (best phases ${us(bestUs)}); TTFT p50 ${ms(r.ttft.p50)} ms; ${r.requests} requests (${r.errors} errors)`,
  ];
}

function modeHeading(m: ModeResult): string {
  const what =
    m.mode === 'fast'
      ? `fast mode (CPU cost): ${m.concurrency} streams in flight, no pacing`
      : `paced mode (added latency): ${m.concurrency} streams in flight, ${m.paceMs} ms between chunks`;
  const noise =
    m.otherLoadCores === undefined
      ? ''
      : `\nother processes on the machine used ${m.otherLoadCores.toFixed(2)} cores meanwhile${m.otherLoadCores > 0.1 ? ' (noisy run)' : ''}`;
  const first = m.comparisons[0];
  const sides = [
    'direct',
    'sluice',
    first?.reference && 'reference',
    first?.governed && 'governed',
    first?.governedRedis && 'governed-redis',
    first?.routed && 'routed',
  ]
    .filter(Boolean)
    .join('/');
  return `${what}; ${m.rounds} x ${m.phaseSeconds} s per side, alternating ${sides}${noise}`;
}

export function formatReport(result: BenchResult): string {
  const out = [
    `sluice bench: Node ${result.node}, ${result.cores} cores (${result.cpu})`,
    `pinning: ${result.pinning}`,
    `each response: role chunk, ${result.chunksPerResponse} content chunks, finish, usage, [DONE]`,
    `gateway RSS once listening, before any request: ${result.gatewayStartRssMiB.toFixed(1)} MiB`,
  ];
  for (const m of result.modes) {
    out.push('', modeHeading(m));
    for (const c of m.comparisons) {
      out.push('', comparisonTable(c));
      out.push(...referenceLines(c));
      out.push(...governedLines(c, result.governedRedisSkipped));
      out.push(...routedLines(c));
      for (const side of ['direct', 'sluice', 'reference', 'governed', 'governedRedis', 'routed'] as const) {
        for (const e of c[side]?.errorSamples ?? []) out.push(`  ${side} error: ${e}`);
      }
    }
  }
  out.push(
    '',
    table(
      [
        ['target', 'measured', 'limit', ''],
        ...result.targets.map((t) => [
          t.name,
          t.measuredMs === undefined ? 'not run' : `${t.measuredMs.toFixed(3)} ms`,
          `<= ${t.limitMs} ms`,
          t.pass === undefined ? '-' : t.pass ? 'PASS' : 'FAIL',
        ]),
      ],
      [false, true, true, false],
    ),
  );
  return out.join('\n');
}
