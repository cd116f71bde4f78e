import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ModeResult } from './report.ts';
import type { SideResult } from './stats.ts';
import { issueTargets } from './targets.ts';

const side = (cpuMsPerRequest: number, ttftP50 = 20, ttftP99 = 30): SideResult => {
  const p = (p50: number, p99: number) => ({ p50, p99 });
  return {
    requests: 100,
    errors: 0,
    errorSamples: [],
    requestsPerSecond: 100,
    ttfb: p(ttftP50, ttftP99),
    ttft: p(ttftP50, ttftP99),
    total: p(ttftP50, ttftP99),
    readsPerResponse: 1,
    upstreamCpuMsPerRequest: 0.02,
    cpuMsPerRequest,
  };
};

const mode = (m: ModeResult['mode'], concurrency: number, comparisons: ModeResult['comparisons']): ModeResult => ({
  mode: m,
  concurrency,
  paceMs: m === 'paced' ? 20 : 0,
  phaseSeconds: 1,
  rounds: 1,
  comparisons,
});

const inputs = {
  modes: [
    mode('fast', 32, [
      {
        label: 'OpenAI-compatible upstream',
        direct: side(0),
        bare: side(0.05),
        sluice: side(0.1),
        governed: side(0.12),
        governedRedis: side(0.15),
      },
    ]),
    mode('paced', 64, [{ label: 'OpenAI-compatible upstream', direct: side(0), bare: side(1, 20, 30), sluice: side(1.2, 20.5, 40) }]),
  ],
  unary: undefined,
  idleRssMiB: 99,
  loaded: {
    streams: 256,
    paceMs: 20,
    startMiB: 100,
    peakMiB: 210,
    requests: 1000,
    errors: 0,
    cpuMsPerRequest: 1,
  },
  admissionUs: undefined,
  telemetryUs: undefined,
};

const byName = (name: string) => {
  const found = issueTargets(inputs).find((t) => t.name.startsWith(name));
  assert.ok(found, name);
  return found;
};

test("issue 29's limits: each ratio against the right side of the same run", () => {
  assert.deepEqual([byName('fast: sluice CPU').measured, byName('fast: sluice CPU').limit, byName('fast: sluice CPU').pass], [2, 2, true]);
  const governed = byName('fast: governed, limits in memory');
  assert.ok(Math.abs(governed.measured! - 1.2) < 1e-9);
  assert.equal(governed.limit, 1.15);
  assert.equal(governed.pass, false);
  const redis = byName('fast: governed, limits in Redis');
  assert.ok(Math.abs(redis.measured! - 1.5) < 1e-9);
  assert.equal(redis.pass, false);
  assert.equal(byName('paced x64: sluice CPU').pass, true);
  assert.equal(byName('paced x64: added TTFT p50').limit, 1);
  const p99 = byName('paced x64: TTFT p99');
  assert.ok(Math.abs(p99.measured! - 4 / 3) < 1e-9);
  assert.equal(p99.limit, 1.5);
  assert.equal(byName('paced x256: sluice serve').pass, false);
  assert.equal(byName('idle:').pass, true);
});

test('a target whose mode did not run is neither passed nor failed', () => {
  assert.equal(byName('paced x256: added TTFT').measured, undefined);
  assert.equal(byName('paced x256: added TTFT').pass, undefined);
  assert.equal(byName('unary: requests per core').pass, undefined);
});
