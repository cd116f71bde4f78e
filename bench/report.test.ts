import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type BenchResult, floorLines, formatReport, governedCost, routedLines, unarySummary } from './report.ts';
import { checkTarget } from './targets.ts';
import type { SideResult } from './stats.ts';

const side = (scale: number, extra: Partial<SideResult> = {}): SideResult => ({
  requests: 1000,
  errors: 0,
  errorSamples: [],
  requestsPerSecond: 500 / scale,
  ttfb: { p50: 1 * scale, p99: 2 * scale },
  ttft: { p50: 20 * scale, p99: 30 * scale },
  total: { p50: 420 * scale, p99: 440 * scale },
  readsPerResponse: 22,
  upstreamCpuMsPerRequest: 0.2,
  ...extra,
});

describe('formatReport', () => {
  it('prints one table per comparison with ratios, differences and the targets', () => {
    const result: BenchResult = {
      node: 'v24.0.0',
      cpu: 'Test CPU',
      cores: 2,
      pinning: 'gateway on core 0; upstream + load generator on core 1',
      chunksPerResponse: 20,
      gatewayStartRssMiB: 80,
      idle: { medianMiB: 95, runs: [94, 95, 96] },
      modes: [
        {
          mode: 'paced',
          concurrency: 64,
          paceMs: 20,
          phaseSeconds: 5,
          rounds: 2,
          otherLoadCores: 0.02,
          comparisons: [
            {
              label: 'OpenAI-compatible upstream',
              direct: side(1),
              sluice: side(1.25, {
                cpuMsPerRequest: 0.25,
                cpuSystemMsPerRequest: 0.1,
                cpuMsPerRequestBest: 0.2,
                peakRssMiB: 100,
                errors: 1,
                errorSamples: ['HTTP 502: x'],
              }),
            },
          ],
        },
      ],
      targets: [
        checkTarget('sluice CPU per request', undefined, 0.3, 'ms'),
        checkTarget('added TTFT p50', 5, 1, 'ms'),
        checkTarget('metrics share', 0.012, 0.03, 'share'),
        checkTarget('requests per core / bare', 0.8, 0.7, 'x', 'least'),
      ],
    };
    assert.equal(
      formatReport(result),
      `sluice bench: Node v24.0.0, 2 cores (Test CPU)
pinning: gateway on core 0; upstream + load generator on core 1
each response: role chunk, 20 content chunks, finish, usage, [DONE]
idle: sluice serve --workers 1 (dist/, default config) RSS 3 s after listening: 95.0 MiB (median of 94.0, 95.0, 96.0)
the bench's gateway process (sources, three gateways) once listening: 80.0 MiB

paced mode (added latency): 64 streams in flight, 20 ms between chunks; 2 x 5 s per side, alternating direct/sluice (the gateway's sides rotating)
other processes on the machine used 0.02 cores meanwhile

| OpenAI-compatible upstream   |   direct |   sluice | sluice/direct | sluice-direct |
|------------------------------|---------:|---------:|--------------:|--------------:|
| streamed requests/s          |      500 |      400 |         0.80x |               |
| TTFB p50 (ms)                |     1.00 |     1.25 |         1.25x |         +0.25 |
| TTFB p99 (ms)                |     2.00 |     2.50 |         1.25x |         +0.50 |
| TTFT p50 (ms)                |     20.0 |     25.0 |         1.25x |         +5.00 |
| TTFT p99 (ms)                |     30.0 |     37.5 |         1.25x |         +7.50 |
| total p50 (ms)               |      420 |      525 |         1.25x |          +105 |
| total p99 (ms)               |      440 |      550 |         1.25x |          +110 |
| client reads/response        |     22.0 |     22.0 |               |               |
| fake upstream CPU ms/request |    0.200 |    0.200 |               |               |
| sluice CPU ms/request        |          |    0.250 |               |               |
|   of which kernel            |          |    0.100 |               |               |
|   best phase                 |          |    0.200 |               |               |
| sluice peak RSS (MiB)        |          |    100.0 |               |               |
| requests (errors)            | 1000 (0) | 1000 (1) |               |               |
  sluice error: HTTP 502: x

| target                   | measured |       limit |      |
|--------------------------|---------:|------------:|------|
| sluice CPU per request   |  not run | <= 0.300 ms | -    |
| added TTFT p50           | 5.000 ms | <= 1.000 ms | FAIL |
| metrics share            |     1.2% |     <= 3.0% | PASS |
| requests per core / bare |    0.80x |    >= 0.70x | PASS |`,
    );
  });

  it('puts the reference proxy under its comparison: its CPU (sluice as a multiple of it) and its added TTFT', () => {
    const result: BenchResult = {
      node: 'v24.0.0',
      cpu: 'Test CPU',
      cores: 2,
      pinning: 'none',
      chunksPerResponse: 20,
      gatewayStartRssMiB: 80,
      idle: { medianMiB: 95, runs: [94, 95, 96] },
      modes: [
        {
          mode: 'fast',
          concurrency: 32,
          paceMs: 0,
          phaseSeconds: 4,
          rounds: 2,
          comparisons: [
            {
              label: 'OpenAI-compatible upstream',
              direct: side(1),
              sluice: side(1, { cpuMsPerRequest: 0.27 }),
              reference: side(1.01, { cpuMsPerRequest: 0.25, cpuSystemMsPerRequest: 0.06, errors: 1, errorSamples: ['reset'] }),
            },
          ],
        },
      ],
      targets: [],
    };
    const lines = formatReport(result).split('\n');
    const at = lines.indexOf('| requests (errors)            | 1000 (0) | 1000 (0) |               |               |');
    assert.ok(at > 0);
    assert.equal(
      lines[at + 1],
      'reference: a minimal hand-written proxy (parse + re-serialize each chunk, same core) 0.250 ms CPU/request (kernel 0.060), 495 req/s; sluice CPU = 1.08x the reference',
    );
    assert.equal(lines[at + 2], 'reference: TTFT p50 20.2 ms, +0.20 over direct (sluice +0.00)');
    assert.equal(lines[at + 3], '  reference error: reset');
  });

  it('puts the governed sides under their comparison: added CPU and TTFT against plain sluice, and why Redis was skipped', () => {
    const comparison = (governedRedis?: SideResult) => ({
      label: 'OpenAI-compatible upstream',
      direct: side(1),
      sluice: side(1, { cpuMsPerRequest: 0.27, cpuMsPerRequestBest: 0.26 }),
      governed: side(1.01, { cpuMsPerRequest: 0.282, cpuMsPerRequestBest: 0.27 }),
      governedRedis,
    });
    const result = (c: ReturnType<typeof comparison>, governedRedisSkipped?: string): BenchResult => ({
      node: 'v24.0.0',
      cpu: 'Test CPU',
      cores: 2,
      pinning: 'none',
      chunksPerResponse: 20,
      governedRedisSkipped,
      gatewayStartRssMiB: 80,
      idle: { medianMiB: 95, runs: [94, 95, 96] },
      modes: [{ mode: 'fast', concurrency: 32, paceMs: 0, phaseSeconds: 4, rounds: 2, comparisons: [c] }],
      targets: [],
    });
    const after = (text: string) => {
      const lines = text.split('\n');
      const at = lines.indexOf('| requests (errors)            | 1000 (0) | 1000 (0) |               |               |');
      return lines.slice(at + 1, at + 3);
    };
    const withRedis = comparison(side(1.05, { cpuMsPerRequest: 0.39, cpuMsPerRequestBest: 0.35 }));
    const cost = governedCost(withRedis, 'governed');
    assert.deepEqual([cost?.cpuUs.toFixed(3), cost?.ttftMs.toFixed(3)], ['12.000', '0.200']);
    assert.deepEqual(after(formatReport(result(withRedis))), [
      'governed (key on a tier with limits and budgets), limits in memory: 0.282 ms CPU/request, +12.0 µs over plain sluice (best phases +10.0 µs); TTFT p50 20.2 ms, +0.20 ms over plain sluice; 1000 requests (0 errors)',
      'governed, limits in Redis: 0.390 ms CPU/request, +120.0 µs over plain sluice (best phases +90.0 µs); TTFT p50 21.0 ms, +1.00 ms over plain sluice, +0.80 ms over in memory; 1000 requests (0 errors)',
    ]);
    assert.equal(
      after(formatReport(result(comparison(), 'no REDIS_URL (or limits.redis_url) set')))[1],
      'governed, limits in Redis: skipped, no REDIS_URL (or limits.redis_url) set',
    );
  });

  it('puts the routed side under its comparison: the CPU a two-target route adds over naming the target', () => {
    const c = {
      label: 'OpenAI-compatible upstream',
      direct: side(1),
      sluice: side(1, { cpuMsPerRequest: 0.5, cpuMsPerRequestBest: 0.48 }),
      routed: side(1.01, { cpuMsPerRequest: 0.51, cpuMsPerRequestBest: 0.485 }),
    };
    assert.deepEqual(routedLines(c), [
      'two-target route, first target healthy: 0.510 ms CPU/request, +10.0 µs (2.0%) over naming the target (best phases +5.0 µs); TTFT p50 20.2 ms; 1000 requests (0 errors)',
    ]);
    assert.deepEqual(routedLines({ ...c, routed: undefined }), []);
  });

  it('divides every proxied side by the bare pass-through of the same rounds', () => {
    const c = {
      label: 'OpenAI-compatible upstream',
      direct: side(1),
      bare: side(1.1, { cpuMsPerRequest: 0.1, peakRssMiB: 60 }),
      sluice: side(1.5, { cpuMsPerRequest: 0.3 }),
      reference: side(1.2, { cpuMsPerRequest: 0.2 }),
    };
    assert.equal(
      floorLines(c).join('\n'),
      `bare pass-through (pipes bytes unchanged): TTFT p50 +2.00 ms over direct, peak RSS 60.0 MiB
| vs bare pass-through             | CPU ms/req | x bare | req/s | x bare | TTFT p50 | - bare | TTFT p99 | x bare |
|----------------------------------|-----------:|-------:|------:|-------:|---------:|-------:|---------:|-------:|
| bare pass-through                |      0.100 |  1.00x |   455 |  1.00x |     22.0 |  +0.00 |     33.0 |  1.00x |
| reference (parse + re-serialize) |      0.200 |  2.00x |   417 |  0.92x |     24.0 |  +2.00 |     36.0 |  1.09x |
| sluice                           |      0.300 |  3.00x |   333 |  0.73x |     30.0 |  +8.00 |     45.0 |  1.36x |`,
    );
    assert.deepEqual(floorLines({ ...c, bare: undefined }), []);
  });

  it("reads the unary sweep in the boards' terms: added latency at the lowest concurrency, the best rate per core", () => {
    const unary = (concurrency: number, bareCpu: number, sluiceCpu: number) => ({
      mode: 'unary' as const,
      concurrency,
      paceMs: 0,
      phaseSeconds: 3,
      rounds: 1,
      comparisons: [
        {
          label: 'OpenAI-compatible upstream, non-streaming',
          direct: side(0.01),
          bare: side(0.015, { cpuMsPerRequest: bareCpu, loadGenCores: 0.3 }),
          sluice: side(0.02, { cpuMsPerRequest: sluiceCpu, loadGenCores: 0.4 }),
        },
      ],
    });
    const u = unarySummary([unary(16, 0.1, 0.25), unary(1, 0.2, 0.5)]);
    assert.ok(u);
    assert.equal(u.concurrency, 1);
    // At concurrency 1 (the sweep's lowest, whatever its order): 420 * (0.02 - 0.015) ms at p50.
    assert.equal(u.addedMs.p50.toFixed(3), '2.100');
    assert.deepEqual([u.bare.perCore, u.bare.atConcurrency, u.sluice.perCore, u.sluice.atConcurrency, u.loadGenCores], [10_000, 16, 4000, 16, 0.4]);
    assert.equal(unarySummary([]), undefined);
  });
});
