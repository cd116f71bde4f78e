import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { ledgerRecord } from '../../test/helpers/ledger-records.ts';
import type { AdmissionRequest, Caller } from '../admission/admission.ts';
import { PricingRegistry } from '../accounting/pricing.ts';
import { configSchema } from '../config/schema.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { ResolvedModel } from '../providers/registry.ts';
import { LimitsAndBudgets } from './admit.ts';

// $1 in and $2 out a million tokens: 1,000 and 2,000 nano-dollars a token.
const PRICED = { pricing: { 'up/m': { input_mtok: 1, output_mtok: 2 } } };
const NOW = Date.UTC(2026, 10, 24, 12);
const target = { provider: 'up', model: 'm', requested: 'up/m' } as ResolvedModel;

const open: LimitsAndBudgets[] = [];
afterEach(async () => {
  for (const limits of open.splice(0)) await limits.close();
});

/** The limits of a gateway without Redis: this instance's own books. */
function limitsOf(config: Record<string, unknown>): LimitsAndBudgets {
  const parsed = configSchema.parse({ ...PRICED, ...config });
  const limits = new LimitsAndBudgets(parsed, { pricing: new PricingRegistry(parsed.pricing), log: (m) => assert.fail(m), now: () => NOW });
  open.push(limits);
  return limits;
}

function request(id: string, caller: Partial<Caller> = {}, fields: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return {
    requestId: id,
    caller: { keyId: 'k1', projectId: 'p1', tier: 'free', allowedModels: null, admin: false, budgets: [], ...caller },
    surface: 'chat',
    target,
    request: { model: 'up/m', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 100 },
    streamed: true,
    ...fields,
  };
}

async function refusal(admitting: ReturnType<LimitsAndBudgets['admit']>): Promise<GatewayError> {
  try {
    await admitting;
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return err;
  }
  assert.fail('admitted');
}

describe('LimitsAndBudgets', () => {
  it('a caller without a tier or a budget is let through at once, with nothing to settle', () => {
    const admission = limitsOf({}).admit(request('r1', { tier: null }));
    assert.ok(!(admission instanceof Promise));
    assert.deepEqual(Object.keys(admission), ['settle']);
  });

  it("a governed request carries its limit headers and its tier's times; its settlement gives its slot back", async () => {
    const limits = limitsOf({ tiers: { free: { requests_per_minute: 10, concurrent_requests: 1, deadline_s: 5, on_disconnect: 'drain' } } });
    const first = await limits.admit(request('r1'));
    assert.equal(first.headers?.['x-ratelimit-remaining-requests'], '9');
    assert.equal(first.headers?.ratelimit, '"requests";r=9;t=6, "concurrency";r=0');
    assert.deepEqual([first.deadline?.ms, first.onDisconnect], [5_000, 'drain']);
    const busy = await refusal(limits.admit(request('r2')));
    assert.deepEqual([busy.status, busy.code, busy.headers['retry-after']], [429, 'rate_limit_exceeded', '1']);
    assert.equal(first.settle(ledgerRecord({ requestId: 'r1' })), undefined);
    const third = await limits.admit(request('r3'));
    // The refused request took nothing of the per-minute limit.
    assert.equal(third.headers?.['x-ratelimit-remaining-requests'], '8');
  });

  it('warns a caller near its per-minute limit', async () => {
    const limits = limitsOf({ tiers: { free: { requests_per_minute: 10 } } });
    for (let i = 0; i < 8; i++) assert.equal((await limits.admit(request(`r${i}`))).warning, undefined);
    assert.deepEqual((await limits.admit(request('r8'))).warning, { scope: 'key', limitType: 'requests', limit: 10, remaining: 1, resetMs: 54_000 });
  });

  it("a non-streamed request is capped to what its budget's reservation pays for, and its spend goes with its row", async () => {
    // $0.0001: the prompt and 40-odd tokens of output.
    const limits = limitsOf({ tiers: { free: { budgets: [{ period: 'day', limit_usd: 0.0001 }] } } });
    const admission = await limits.admit(request('r1', {}, { streamed: false }));
    assert.equal(admission.watch, undefined);
    assert.ok(admission.maxOutputTokens !== undefined && admission.maxOutputTokens < 100 && admission.maxOutputTokens > 0);
    const amended = admission.settle(ledgerRecord({ requestId: 'r1', costUsd: 0.0001, finishReason: 'length' }));
    assert.equal(amended?.finishReason, 'budget_exhausted');
    assert.deepEqual(
      amended?.budgetSpend?.map((s) => [s.subject, s.period, s.usd]),
      [['key:k1', 'day', 0.0001]],
    );
    // The ledger wrote the row: its spend is the day's from now on.
    limits.spendWritten([amended]);
    const spent = await refusal(limits.admit(request('r2')));
    assert.deepEqual([spent.status, spent.code], [429, 'insufficient_quota']);
    assert.match(spent.message, /is used up/);
  });

  it("a stream with a budget is watched as it goes; the caller's own budget applies without a tier", async () => {
    const limits = limitsOf({});
    const admission = await limits.admit(request('r1', { tier: null, budgets: [{ scope: 'key', period: 'month', limitUsd: 1 }] }));
    assert.equal(typeof admission.watch, 'function');
    assert.equal(admission.maxOutputTokens, undefined);
    assert.equal(admission.headers && Object.keys(admission.headers).length, 0);
  });
});
