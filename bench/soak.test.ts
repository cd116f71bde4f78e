import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatSoak, runSoak, splitStreams } from './soak.ts';

describe('the soak (npm run bench -- --soak)', () => {
  it('sends as many streams upstream as the open-file limit leaves room for, the rest to the mock', () => {
    assert.deepEqual(splitStreams(10_000, 20_000), { fdLimit: 20_000, upstream: 9_000, mock: 1_000 });
    assert.deepEqual(splitStreams(300, 20_000), { fdLimit: 20_000, upstream: 300, mock: 0 });
    assert.deepEqual(splitStreams(300, undefined), { fdLimit: undefined, upstream: 300, mock: 0 });
    assert.throws(() => splitStreams(10_000, 1_024), /more than the open-file limit of 1024/);
  });

  it('holds a few hundred slow streams through the gateway and reports them (a short run: no memory or time bounds)', async () => {
    const lines: string[] = [];
    // Split as under an open-file limit of 1,450 (1,000 kept for the rest): 150 + 150, both paths run.
    // Opened within a second, each stream 13 s long: all 300 are open at once even when the test
    // shares a loaded machine and the openings fall seconds behind (7 s did not always do).
    const result = await runSoak({ streams: 300, seconds: 16, rampSeconds: 1, log: (line) => lines.push(line), fdLimit: 1_450 });
    assert.deepEqual(result.split, { fdLimit: 1_450, upstream: 150, mock: 150 });
    assert.equal(result.errors, 0, result.errorSamples.join('\n'));
    assert.equal(result.completed, 300);
    assert.equal(result.peakOpen, 300);
    assert.ok(result.frames > 300, `${result.frames} data frames`);
    assert.ok(result.samples.length > 0 && result.idleRssBytes > 0);
    const report = formatSoak(result);
    assert.match(report, /150 streams through the fake upstream \(one upstream socket each\), 150 through the built-in mock/);
    assert.match(report, /gateway RSS: idle \d+ MiB, peak \d+ MiB/);
    assert.match(report, /300 completed, 0 errors/);
    assert.ok(
      lines.some((l) => l.startsWith('soak: 300 streams')),
      lines.join('\n'),
    );
  });
});
