import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toNanos } from '../budgets/budget-windows.ts';
import { day, END, NOW, plan } from '../../../test/helpers/admission-plans.ts';
import { previewOf, type Standing } from './preview.ts';

const ESTIMATE = { promptTokens: 420, reservationNanos: toNanos(0.2) };

const roomy: Standing = {
  rates: [
    { limit: 5, remaining: 4, resetMs: 12_000 },
    { limit: 1_000, remaining: 900, resetMs: 6_000 },
  ],
  inUse: [1],
  spentNanos: new Map([[day.id, toNanos(0.25)]]),
};

describe('previewOf', () => {
  it('reports every limit and budget with what the request would leave of it', () => {
    const { preview, refusal } = previewOf(plan, 'free', roomy, ESTIMATE, NOW);
    assert.equal(refusal, undefined);
    assert.deepEqual(preview.limits, [
      { scope: 'key', kind: 'requests', limit: 5, remaining: 4, remainingAfter: 3, resetMs: 12_000 },
      { scope: 'project', kind: 'tokens', limit: 1_000, remaining: 900, remainingAfter: 480, resetMs: 6_000 },
      { scope: 'project', kind: 'concurrent', limit: 2, remaining: 1, remainingAfter: 0, resetMs: 0 },
    ]);
    assert.deepEqual(preview.budgets, [
      { scope: 'key', period: 'day', limitUsd: 1, spentUsd: 0.25, reservationUsd: 0.2, remainingAfterUsd: 0.55, resetsAt: END },
    ]);
    assert.equal(preview.reservationUsd, 0.2);
    assert.equal(preview.estimatedInputTokens, 420);
    assert.equal(preview.tier, 'free');
  });

  it('gives the refusal the admit step would answer with: a budget first, then a per-minute limit', () => {
    const spent = previewOf(plan, null, { ...roomy, spentNanos: new Map([[day.id, toNanos(0.95)]]) }, ESTIMATE, NOW);
    assert.equal(spent.refusal?.code, 'insufficient_quota');
    const tokens = previewOf(plan, null, { ...roomy, rates: [roomy.rates[0], { limit: 1_000, remaining: 100, resetMs: 1 }] }, ESTIMATE, NOW);
    assert.equal(tokens.refusal?.code, 'rate_limit_exceeded');
    assert.match(tokens.refusal?.message ?? '', /tokens per min \(TPM\): Limit 1000, Used 900, Requested 420/);
    // 320 tokens short at 1000 a minute: 19.2 s.
    assert.equal(tokens.refusal?.headers['retry-after'], '20');
    const busy = previewOf(plan, null, { ...roomy, inUse: [2] }, ESTIMATE, NOW);
    assert.match(busy.refusal?.message ?? '', /Too many concurrent requests/);
  });
});
