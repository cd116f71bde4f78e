import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { BenchResult } from '../../bench/report.ts';

const run = fileURLToPath(new URL('../../bench/run.ts', import.meta.url));

describe('npm run bench (a very short run)', () => {
  // About 50 s alone; twice that beside npm test's other processes on 2 cores, so its limits are its own.
  it('streams through every side in every mode (unary too) and reports every number, without errors', { timeout: 240_000 }, async () => {
    const args = [
      '--json',
      '--no-pin',
      // As short as still gives every side requests: its phases run the load flat out on both
      // cores, so each tenth of a second here is CPU npm test's other processes wait for.
      '--duration',
      '0.2',
      '--warmup',
      '0.1',
      '--rounds',
      '1',
      '--pace-ms',
      '5',
      '--concurrency',
      '4',
      '--paced-concurrency',
      '8',
      '--unary-concurrency',
      '1,4',
      // The request-log paging step on a small ledger (bench/ledger-paging.test.ts checks its pages).
      '--ledger-page-rows',
      '20000',
    ];
    const { stdout } = await promisify(execFile)(process.execPath, [run, ...args], { timeout: 220_000 });
    const result = JSON.parse(stdout) as BenchResult;
    assert.deepEqual(
      result.modes.map((m) => [m.mode, m.concurrency, m.paceMs, m.comparisons[0].label]),
      [
        ['fast', 4, 0, 'OpenAI-compatible upstream'],
        ['paced', 8, 5, 'OpenAI-compatible upstream'],
        ['unary', 1, 0, 'OpenAI-compatible upstream, non-streaming'],
        ['unary', 4, 0, 'OpenAI-compatible upstream, non-streaming'],
      ],
    );
    for (const mode of result.modes) {
      for (const c of mode.comparisons) {
        assert.deepEqual([c.direct.errors, c.sluice.errors], [0, 0], `${mode.mode} ${c.label}`);
        assert.ok(c.direct.requests > 0 && c.sluice.requests > 0);
        assert.ok(c.sluice.ttft.p50 > 0 && c.sluice.total.p99 >= c.sluice.ttft.p50);
        assert.ok(c.sluice.cpuMsPerRequest! > 0 && c.sluice.peakRssMiB! > 0);
        assert.equal(c.direct.cpuMsPerRequest, undefined);
        // The bare pass-through, the floor of every row: the same bytes as direct, piped.
        assert.ok(c.bare && c.bare.errors === 0 && c.bare.requests > 0, `${mode.mode} ${c.label} bare: ${c.bare?.errorSamples}`);
        assert.ok(c.bare.cpuMsPerRequest! > 0 && c.bare.loadGenCores! > 0);
      }
      if (mode.mode === 'unary') continue;
      // The governed row: a key on a tier with every limit and budgets, with limits in memory
      // (and in Redis when REDIS_URL reaches one); every answer carried its limit headers.
      const [openAI] = mode.comparisons;
      assert.ok(openAI.governed && openAI.governed.requests > 0 && openAI.governed.cpuMsPerRequest! > 0);
      assert.equal(openAI.governed.errors, 0, `${mode.mode} governed: ${openAI.governed.errorSamples.join('; ')}`);
      if (openAI.governedRedis) assert.equal(openAI.governedRedis.errors, 0, openAI.governedRedis.errorSamples.join('; '));
      else assert.match(result.governedRedisSkipped ?? '', /REDIS_URL|not reachable/);
      // The routed row: a two-target route whose first target is healthy answers like the target.
      assert.ok(openAI.routed && openAI.routed.requests > 0 && openAI.routed.cpuMsPerRequest! > 0);
      assert.equal(openAI.routed.errors, 0, `${mode.mode} routed: ${openAI.routed.errorSamples.join('; ')}`);
      // The telemetry-off side: the same gateway config with metrics and the log line off.
      assert.ok(openAI.telemetryOff && openAI.telemetryOff.requests > 0 && openAI.telemetryOff.cpuMsPerRequest! > 0);
      assert.equal(openAI.telemetryOff.errors, 0, `${mode.mode} telemetry off: ${openAI.telemetryOff.errorSamples.join('; ')}`);
    }
    // The issues' targets: those of the modes this run had are measured; the paced ones name 64
    // and 256 streams, which this short run does not run, and governed in Redis needs REDIS_URL.
    const measured = result.targets.filter((t) => t.measured !== undefined).map((t) => t.name);
    const redis = result.modes.find((m) => m.mode === 'fast')?.comparisons[0].governedRedis !== undefined;
    assert.deepEqual(measured, [
      'fast: sluice CPU per streamed request / bare pass-through (OpenAI-compatible)',
      "fast: Anthropic -> OpenAI translation's ratio to bare / the OpenAI-compatible ratio",
      'unary x1: added latency p50 over the bare pass-through',
      'unary: requests per core / the bare pass-through',
      'idle: sluice serve --workers 1, RSS 3 s after listening',
      'paced x8: sluice serve --workers 1, peak RSS',
      'fast: governed, limits in memory, CPU per request / plain sluice',
      ...(redis ? ['fast: governed, limits in Redis, CPU per request / plain sluice'] : []),
      'governed: admission + settlement CPU per request, in memory (32 in flight)',
      'metrics + request log line, end to end: plain sluice / telemetry off - 1 (fast)',
      'metrics + request log line alone, share of the CPU per request (fast, OpenAI-compatible)',
    ]);
    // The idle figure: the product's own start, three times.
    assert.ok(result.idle.runs.length === 3 && result.idle.medianMiB > 0, JSON.stringify(result.idle));
    // The loaded figure: the product as a user runs it, under the paced mode's load.
    const loaded = result.loaded!;
    assert.ok(loaded.requests > 0 && loaded.errors === 0 && loaded.peakMiB >= loaded.startMiB, JSON.stringify(loaded));
    for (const t of result.targets) assert.equal(typeof t.pass, t.measured === undefined ? 'undefined' : 'boolean', t.name);
    // The boards' figures: a rate per core for both proxies, over the two-point sweep.
    assert.ok(result.unary && result.unary.bare.perCore > 0 && result.unary.sluice.perCore > 0);
    assert.ok(result.unary.loadGenCores > 0);
  });
});
