import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { AdmissionRequest, Caller } from '../../admission/admission.ts';
import { configSchema } from '../../config/schema.ts';
import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import type { ResolvedModel } from '../../providers/registry.ts';
import { estimatePromptTokens } from '../../accounting/count-tokens.ts';
import type { TokenPrices } from '../budgets/request-estimate.ts';
import { compileTier, type TierPolicy } from '../limits/tier-policy.ts';
import { HOLD_MARGIN_MS, type PlanSettings, planCharges } from './plan-charges.ts';

const NOW = Date.UTC(2026, 10, 24, 12);
const target = { provider: 'up', model: 'm', requested: 'up/m' } as ResolvedModel;

function tier(config: Record<string, unknown>): TierPolicy {
  return compileTier('t', configSchema.parse({ tiers: { t: config } }).tiers.t);
}

function caller(fields: Partial<Caller> = {}): Caller {
  return { keyId: 'k1', projectId: 'p1', tier: 't', allowedModels: null, admin: false, budgets: [], ...fields };
}

function admission(fields: Partial<AdmissionRequest> = {}, request: Partial<CanonicalRequest> = {}): AdmissionRequest {
  return {
    requestId: 'r1',
    caller: caller(),
    surface: 'chat',
    target,
    request: { model: 'up/m', messages: [{ role: 'user', content: 'Hello there, sea.' }], ...request },
    streamed: true,
    ...fields,
  };
}

/** `perImage`: the nano-dollars of one image, for a media model priced per image. */
function settings(prices: TokenPrices = { inputNanos: 1_000, outputNanos: 10_000 }, reserve = 4096, perImage = 0): PlanSettings {
  return {
    prices: { of: () => prices, unitsNanos: (_provider, _model, units) => (units.images ?? 0) * perImage },
    reserveOutputTokens: reserve,
    defaultHoldMs: 600_000,
  };
}

describe('planCharges', () => {
  const prompt = estimatePromptTokens(admission().request);

  const cases: {
    name: string;
    tier?: Record<string, unknown>;
    req?: AdmissionRequest;
    charges: [string, 'requests' | 'tokens', number, number][];
    scopes: string[];
    claims: [string, number][];
  }[] = [
    {
      name: 'a key limit charges the key alone',
      tier: { requests_per_minute: 5, tokens_per_minute: 100, concurrent_requests: 2 },
      charges: [
        ['key:k1', 'requests', 5, 1],
        ['key:k1', 'tokens', 100, prompt],
      ],
      scopes: ['key', 'key'],
      claims: [['key:k1', 2]],
    },
    {
      name: "a project limit charges the key's project",
      tier: { project: { requests_per_minute: 50, concurrent_requests: 9 } },
      charges: [['project:p1', 'requests', 50, 1]],
      scopes: ['project'],
      claims: [['project:p1', 9]],
    },
    {
      name: 'the key first, then its project',
      tier: { tokens_per_minute: 100, project: { tokens_per_minute: 1_000 } },
      charges: [
        ['key:k1', 'tokens', 100, prompt],
        ['project:p1', 'tokens', 1_000, prompt],
      ],
      scopes: ['key', 'project'],
      claims: [],
    },
    {
      name: 'a caller without a project is charged to its key alone',
      tier: { requests_per_minute: 5, project: { requests_per_minute: 50 } },
      req: admission({ caller: caller({ projectId: null }) }),
      charges: [['key:k1', 'requests', 5, 1]],
      scopes: ['key'],
      claims: [],
    },
    {
      name: "an embeddings request's tokens are its input's, not the chat prompt's estimate",
      tier: { tokens_per_minute: 100 },
      req: admission({ surface: 'embeddings', inputTokens: 42 }),
      charges: [['key:k1', 'tokens', 100, 42]],
      scopes: ['key'],
      claims: [],
    },
    { name: 'no tier, no charge', charges: [], scopes: [], claims: [] },
    { name: 'a tier of budgets alone charges no limit', tier: { budgets: [{ period: 'day', limit_usd: 1 }] }, charges: [], scopes: [], claims: [] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const plan = planCharges(c.req ?? admission(), c.tier ? tier(c.tier) : undefined, NOW, settings());
      assert.deepEqual(
        plan.charges.map((x) => [x.subject, x.kind, x.limit, x.points]),
        c.charges,
      );
      assert.deepEqual(plan.scopes, c.scopes);
      assert.deepEqual(
        plan.claims.map((x) => [x.subject, x.limit]),
        c.claims,
      );
    });
  }

  it("reserves in the tier's budget windows and the caller's own, the prompt at its estimate", () => {
    const req = admission({ caller: caller({ budgets: [{ scope: 'project', period: 'month', limitUsd: 50 }] }) }, { max_tokens: 100 });
    const plan = planCharges(req, tier({ budgets: [{ period: 'day', limit_usd: 2 }] }), NOW, settings());
    assert.deepEqual(
      plan.budget?.windows.map((w) => [w.id, w.limitNanos]),
      [
        ['key:k1:day:2026-11-24', 2_000_000_000],
        ['project:p1:month:2026-11', 50_000_000_000],
      ],
    );
    assert.deepEqual([plan.budget?.inputNanos, plan.budget?.want], [prompt * 1_000, prompt * 1_000 + 100 * 10_000]);
  });

  it('no budget, no reservation', () => {
    assert.equal(planCharges(admission(), tier({ requests_per_minute: 5 }), NOW, settings()).budget, undefined);
  });

  it('an embeddings request reserves no output', () => {
    const req = admission({ surface: 'embeddings', inputTokens: 10, caller: caller({ budgets: [{ scope: 'key', period: 'day', limitUsd: 1 }] }) });
    const plan = planCharges(req, undefined, NOW, settings());
    assert.deepEqual([plan.budget?.choices, plan.budget?.want, plan.budget?.min], [0, 10_000, 10_000]);
  });

  it('a media request priced per unit reserves its units up front, in its minimum too', () => {
    const budgets = caller({ budgets: [{ scope: 'key', period: 'day', limitUsd: 1 }] });
    const free = { inputNanos: 0, outputNanos: 0 };
    const plan = planCharges(
      admission({ surface: 'images', caller: budgets, units: { images: 3 } }),
      undefined,
      NOW,
      settings(free, 4096, 40_000_000),
    );
    assert.deepEqual([plan.budget?.want, plan.budget?.min], [120_000_000, 120_000_001]);
  });

  it("holds slots and reservations for the tier's deadline, else the gateway's longest, and a margin", () => {
    assert.equal(planCharges(admission(), tier({ deadline_s: 30, concurrent_requests: 1 }), NOW, settings()).holdMs, 30_000 + HOLD_MARGIN_MS);
    assert.equal(planCharges(admission(), tier({ concurrent_requests: 1 }), NOW, settings()).holdMs, 600_000 + HOLD_MARGIN_MS);
    // A tier without a deadline (0) holds as long as the gateway lets a request run.
    assert.equal(planCharges(admission(), tier({ deadline_s: 0, concurrent_requests: 1 }), NOW, settings()).holdMs, 600_000 + HOLD_MARGIN_MS);
  });

  it('a plan never reserves less than the least cost of its request (its prompt and one output token per choice)', () => {
    const request = fc.record({
      text: fc.string({ maxLength: 400 }),
      messages: fc.integer({ min: 1, max: 6 }),
      max_tokens: fc.option(fc.integer({ min: 1, max: 100_000 }), { nil: undefined }),
      n: fc.option(fc.integer({ min: 1, max: 128 }), { nil: undefined }),
      best_of: fc.option(fc.integer({ min: 1, max: 128 }), { nil: undefined }),
    });
    const surface = fc.constantFrom<AdmissionRequest['surface']>('chat', 'responses', 'messages', 'embeddings');
    const prices = fc.record({ inputNanos: fc.double({ min: 0, max: 1e6, noNaN: true }), outputNanos: fc.double({ min: 0, max: 1e6, noNaN: true }) });
    fc.assert(
      fc.property(request, surface, prices, fc.integer({ min: 1, max: 100_000 }), (r, s, p, reserve) => {
        const req = admission(
          {
            surface: s,
            inputTokens: s === 'embeddings' ? r.text.length : undefined,
            caller: caller({ budgets: [{ scope: 'key', period: 'day', limitUsd: 1 }] }),
          },
          {
            messages: Array.from({ length: r.messages }, () => ({ role: 'user' as const, content: r.text })),
            max_tokens: r.max_tokens,
            n: r.n,
            extra: r.best_of === undefined ? undefined : { best_of: r.best_of },
          },
        );
        const budget = planCharges(req, undefined, NOW, settings(p, reserve)).budget;
        assert.ok(budget);
        const leastCost = budget.inputNanos + budget.choices * budget.outputNanosPerToken;
        assert.ok(budget.want >= leastCost, `want ${budget.want} < least cost ${leastCost}`);
        assert.ok(budget.min >= leastCost && budget.min >= 1);
        assert.equal(budget.choices, s === 'embeddings' ? 0 : Math.max(r.n ?? 1, r.best_of ?? 1));
      }),
    );
  });

  it('every token charge and the reservation count the same prompt estimate', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), fc.boolean(), (text, withProject) => {
        const req = admission(
          { caller: caller({ budgets: [{ scope: 'key', period: 'month', limitUsd: 5 }] }) },
          { messages: [{ role: 'user', content: text }] },
        );
        const limits = { tokens_per_minute: 1_000, ...(withProject ? { project: { tokens_per_minute: 10_000 } } : {}) };
        const plan = planCharges(req, tier(limits), NOW, settings({ inputNanos: 1, outputNanos: 0 }));
        const estimate = estimatePromptTokens(req.request);
        assert.deepEqual(
          plan.charges.map((c) => c.points),
          withProject ? [estimate, estimate] : [estimate],
        );
        assert.equal(plan.budget?.inputNanos, estimate);
      }),
    );
  });
});
