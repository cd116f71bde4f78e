import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { interruptedRecord } from './interrupted-record.ts';
import type { AdmittedRequest, RequestProgress } from './journal-entries.ts';
import { PricingRegistry } from './pricing.ts';

/** $1 per million input tokens, $2 per million output tokens. */
const pricing = new PricingRegistry({ 'up/model-a': { input_mtok: 1, output_mtok: 2 }, 'up/model-b': { input_mtok: 10, output_mtok: 20 } });

const admitted: AdmittedRequest = {
  requestId: 'req_1',
  createdAt: 1_000_000,
  keyId: 'k1',
  projectId: 'p1',
  provider: 'up',
  model: 'model-a',
  requestedModel: 'fast',
  surface: 'chat',
  streamed: true,
  promptTokens: 100,
};

const progress = (overrides: Partial<RequestProgress> = {}): RequestProgress => ({
  requestId: 'req_1',
  at: 1_004_000,
  provider: 'up',
  model: 'model-a',
  acknowledged: true,
  firstOutputAt: 1_000_300,
  outputTokens: 250,
  reported: null,
  ...overrides,
});

describe('interruptedRecord (a crash loses every request in flight)', () => {
  it('records what the journal last knew: the prompt estimate, the output so far, priced, outcome interrupted', () => {
    const r = interruptedRecord({ admitted, progress: progress() }, pricing);
    assert.deepEqual(
      {
        outcome: r.outcome,
        code: r.errorCode,
        type: r.errorType,
        input: r.inputTokens,
        output: r.outputTokens,
        source: r.usageSource,
        ttft: r.ttftMs,
        latency: r.latencyMs,
        status: r.upstreamStatus,
        key: r.keyId,
        project: r.projectId,
        requested: r.requestedModel,
        priceKnown: r.priceKnown,
      },
      {
        outcome: 'interrupted',
        code: 'gateway_stopped',
        type: 'server_error',
        input: 100,
        output: 250,
        source: 'estimated',
        ttft: 300,
        latency: 4_000,
        status: 200,
        key: 'k1',
        project: 'p1',
        requested: 'fast',
        priceKnown: true,
      },
    );
    assert.equal(r.costUsd, (100 * 1 + 250 * 2) / 1e6);
  });

  it("takes the upstream's own input count when it reported one, and the larger output", () => {
    const reported = { inputTokens: 180, cachedInputTokens: 80, outputTokens: 300, source: 'provider' as const };
    const r = interruptedRecord({ admitted, progress: progress({ reported }) }, pricing);
    assert.deepEqual([r.inputTokens, r.cachedInputTokens, r.outputTokens], [180, 80, 300]);
  });

  it('prices the target routing moved it to', () => {
    const r = interruptedRecord({ admitted, progress: progress({ model: 'model-b', outputTokens: 0 }) }, pricing);
    assert.equal(r.model, 'model-b');
    assert.equal(r.costUsd, (100 * 10) / 1e6);
  });

  it('with no progress line (cut before its first), charges the prompt and nothing else', () => {
    const r = interruptedRecord({ admitted }, pricing);
    assert.deepEqual([r.inputTokens, r.outputTokens, r.ttftMs, r.latencyMs, r.upstreamStatus, r.costUsd], [100, 0, null, 0, null, 100 / 1e6]);
  });

  it('reads a damaged line as zero, never as NaN', () => {
    const damaged = progress({ outputTokens: 'many' as unknown as number, reported: { inputTokens: -3, outputTokens: 5, source: 'provider' } });
    const r = interruptedRecord({ admitted: { ...admitted, promptTokens: Number.NaN }, progress: damaged }, pricing);
    assert.deepEqual([r.inputTokens, r.outputTokens], [0, 5]);
    assert.ok(Number.isFinite(r.costUsd));
  });

  it('an unpriced model is flagged, as any other row', () => {
    const r = interruptedRecord({ admitted: { ...admitted, provider: 'nobody', model: 'x' } }, pricing);
    assert.deepEqual([r.priceKnown, r.costUsd], [false, 0]);
  });

  it("keeps the request's tags from its admission line", () => {
    assert.equal(interruptedRecord({ admitted, progress: progress() }, pricing).tags, null);
    assert.deepEqual(interruptedRecord({ admitted: { ...admitted, tags: ['nightly'] }, progress: progress() }, pricing).tags, ['nightly']);
  });
});
