import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const sample = fileURLToPath(new URL('./stream-tap-sample.ts', import.meta.url));

/** The sample test file in its own `node --test`, sending these streams through a tapped server. */
function runSample(streams: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--test', '--test-reporter=spec', sample],
      { env: { PATH: process.env.PATH ?? '', TAP_SAMPLE_STREAMS: streams.join(',') }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
    );
  });
}

describe('the stream tap', () => {
  it('passes whole streams; says what it did not check: an abandoned stream, an explicit opt-out', async () => {
    const { code, output } = await runSample(['whole', 'abandoned', 'partial']);
    assert.equal(code, 0, output);
    assert.match(
      output,
      /stream tap: 1 streams checked, 1 abandoned by their client \(not checked\), not checked on purpose: GET \/partial: the sample cuts this stream on purpose/,
    );
  });

  it('fails the test file on a stream the gateway ended that breaks the contract, naming its violations', async () => {
    const { code, output } = await runSample(['whole', 'cut']);
    assert.equal(code, 1, output);
    assert.match(
      output,
      /streams that break the stream contract \(sluice check\):\n\s+GET \/cut\n\s+end: done\/missing: the stream ends without data: \[DONE\]/,
    );
    assert.match(output, /end: chat\/finish-once: choice 0 never finishes/);
  });

  it('a stream the server drops mid-way (the client did not leave) is checked, and fails', async () => {
    const { code, output } = await runSample(['whole', 'dropped']);
    assert.equal(code, 1, output);
    assert.match(output, /GET \/dropped\n\s+end: done\/missing/);
  });
});
