import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PhaseResult } from './load.ts';
import { percentile, summarize } from './stats.ts';

const timing = (ms: number) => ({ ttfb: ms / 10, ttft: ms / 2, total: ms, reads: 2 });

describe('stats', () => {
  it('takes nearest-rank percentiles', () => {
    const sorted = Array.from({ length: 200 }, (_, i) => i + 1);
    assert.deepEqual(
      [50, 99, 100, 0].map((p) => percentile(sorted, p)),
      [100, 198, 200, 1],
    );
    assert.deepEqual([percentile([7], 99), percentile([], 50)], [7, Number.NaN]);
  });

  it('aggregates phases and divides CPU by the requests served', () => {
    const phases: PhaseResult[] = [
      { timings: [10, 20, 30].map(timing), errors: 0, errorSamples: [], wallMs: 1000 },
      { timings: [40].map(timing), errors: 1, errorSamples: ['HTTP 502: bad'], wallMs: 1000 },
    ];
    const side = summarize(phases, [
      { upstreamCpuUs: 400, proxy: { userUs: 1200, systemUs: 300, requests: 3, peakRss: 100 * 1024 * 1024 } },
      { upstreamCpuUs: 400, proxy: { userUs: 400, systemUs: 100, requests: 1, peakRss: 120 * 1024 * 1024 } },
    ]);
    assert.deepEqual(side, {
      requests: 4,
      errors: 1,
      errorSamples: ['HTTP 502: bad'],
      requestsPerSecond: 2,
      ttfb: { p50: 2, p99: 4 },
      ttft: { p50: 10, p99: 20 },
      total: { p50: 20, p99: 40 },
      readsPerResponse: 2,
      upstreamCpuMsPerRequest: 0.2,
      cpuMsPerRequest: 0.5,
      cpuSystemMsPerRequest: 0.1,
      cpuMsPerRequestBest: 0.5,
      peakRssMiB: 120,
    });
    assert.equal(summarize(phases, [{ upstreamCpuUs: 800 }]).cpuMsPerRequest, undefined);
  });
});
