import type { PhaseResult, RequestTiming } from './load.ts';

export interface Percentiles {
  p50: number;
  p99: number;
}

/** One side (direct, sluice, or the reference proxy) of one comparison, over all its measured phases. */
export interface SideResult {
  requests: number;
  errors: number;
  errorSamples: string[];
  requestsPerSecond: number;
  ttfb: Percentiles;
  ttft: Percentiles;
  total: Percentiles;
  readsPerResponse: number;
  /** The fake upstream's CPU per request: the same work on both paths, a floor to compare sluice with. */
  upstreamCpuMsPerRequest: number;
  /** Through a proxy only: its user+system CPU over its phases, per request. */
  cpuMsPerRequest?: number;
  /** The part of it spent in the kernel (socket reads and writes, mostly). */
  cpuSystemMsPerRequest?: number;
  /** The lowest per-request CPU of a single phase: the least disturbed by other load. */
  cpuMsPerRequestBest?: number;
  /** Through a proxy only: the highest RSS sampled during its phases. */
  peakRssMiB?: number;
  /** This process's own CPU (the load generator) per request, and in cores over the phases' wall time. */
  loadGenCpuMsPerRequest?: number;
  loadGenCores?: number;
}

/** Nearest-rank percentile of an ascending list (NaN when empty). */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

function percentiles(timings: RequestTiming[], key: 'ttfb' | 'ttft' | 'total'): Percentiles {
  const sorted = timings.map((t) => t[key]).sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

/** What the child processes used during one phase. */
export interface PhaseUsage {
  upstreamCpuUs: number;
  /** The load generator's (this process's) user+system CPU during the phase. */
  loadGenCpuUs?: number;
  /** The process in the middle (sluice, or the reference proxy); absent for direct phases. */
  proxy?: { userUs: number; systemUs: number; requests: number; peakRss: number };
}

/** Aggregates the phases of one side with what the processes used during each. */
export function summarize(phases: PhaseResult[], usage: PhaseUsage[]): SideResult {
  const timings = phases.flatMap((p) => p.timings);
  const wallMs = phases.reduce((sum, p) => sum + p.wallMs, 0);
  const side: SideResult = {
    requests: timings.length,
    errors: phases.reduce((sum, p) => sum + p.errors, 0),
    errorSamples: phases.flatMap((p) => p.errorSamples).slice(0, 5),
    requestsPerSecond: wallMs > 0 ? timings.length / (wallMs / 1000) : 0,
    ttfb: percentiles(timings, 'ttfb'),
    ttft: percentiles(timings, 'ttft'),
    total: percentiles(timings, 'total'),
    readsPerResponse: timings.length > 0 ? timings.reduce((sum, t) => sum + t.reads, 0) / timings.length : 0,
    upstreamCpuMsPerRequest: perRequest(
      usage.reduce((sum, u) => sum + u.upstreamCpuUs, 0),
      timings.length,
    ),
  };
  const loadGen = usage.flatMap((u) => (u.loadGenCpuUs === undefined ? [] : [u.loadGenCpuUs]));
  if (loadGen.length > 0) {
    const cpuUs = loadGen.reduce((sum, us) => sum + us, 0);
    side.loadGenCpuMsPerRequest = perRequest(cpuUs, timings.length);
    side.loadGenCores = wallMs > 0 ? cpuUs / 1000 / wallMs : Number.NaN;
  }
  const proxy = usage.flatMap((u) => (u.proxy ? [u.proxy] : []));
  if (proxy.length > 0) {
    side.cpuMsPerRequest = perRequest(
      proxy.reduce((sum, g) => sum + g.userUs + g.systemUs, 0),
      timings.length,
    );
    side.cpuSystemMsPerRequest = perRequest(
      proxy.reduce((sum, g) => sum + g.systemUs, 0),
      timings.length,
    );
    side.cpuMsPerRequestBest = Math.min(...proxy.map((g) => perRequest(g.userUs + g.systemUs, g.requests)));
    side.peakRssMiB = Math.max(...proxy.map((g) => g.peakRss)) / (1024 * 1024);
  }
  return side;
}

function perRequest(cpuUs: number, requests: number): number {
  return requests > 0 ? cpuUs / 1000 / requests : Number.NaN;
}
