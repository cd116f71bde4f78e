import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import { type BudgetWindow, toNanos } from '../budgets/budget-windows.ts';
import type { Checked } from './check-charges.ts';
import { refuseIfOver } from './refusal.ts';
import { day, END, NOW, plan } from '../../../test/helpers/admission-plans.ts';

const month: BudgetWindow = { ...day, id: 'project:p1:month:2026-11', subject: 'project:p1', period: 'month', limitNanos: toNanos(20) };

const limitHeaders = { 'x-ratelimit-limit-requests': '5' };
const fits: Checked = {
  rates: { ok: true, states: [] },
  slots: { ok: true, inUse: [1] },
  budget: { ok: true, granted: toNanos(0.2) },
};
const rateState = { limit: 5, remaining: 0, resetMs: 12_000 };

function refusal(checked: Partial<Checked>): GatewayError | undefined {
  try {
    refuseIfOver(plan, { ...fits, ...checked }, limitHeaders, NOW);
    return undefined;
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return err;
  }
}

describe('refuseIfOver', () => {
  it('lets through a request that every limit and the budget admitted', () => {
    assert.equal(refusal({}), undefined);
    assert.equal(refusal({ rates: undefined, slots: undefined, budget: undefined }), undefined);
  });

  const cases: { name: string; checked: Partial<Checked>; code: string; message: string; retryAfterMs: string }[] = [
    {
      name: 'a spent budget: 429 insufficient_quota until the window resets, not to be retried',
      checked: { budget: { ok: false, window: day, spentNanos: toNanos(1), reservedNanos: 0 } },
      code: 'insufficient_quota',
      message: 'You exceeded your current quota: the daily budget of $1 of key k1 is used up ($1 spent). It resets at 2026-11-25T00:00:00.000Z.',
      retryAfterMs: String(END - NOW),
    },
    {
      name: "a budget with less left than the request's least cost says what is left and what is held",
      checked: { budget: { ok: false, window: month, spentNanos: toNanos(19.9), reservedNanos: toNanos(0.05) } },
      code: 'insufficient_quota',
      message:
        "You exceeded your current quota: the monthly budget of $20 of project p1 has $0.05 left ($19.9 spent, $0.05 held by requests in progress), less than this request's least cost of $0.1 (its prompt and one output token per choice). It resets at 2026-11-25T00:00:00.000Z.",
      retryAfterMs: String(END - NOW),
    },
    {
      name: 'requests per minute: 429 rate_limit_exceeded worded as OpenAI words it',
      checked: { rates: { ok: false, refused: 0, used: 7, retryAfterMs: 12_000, states: [rateState, rateState] } },
      code: 'rate_limit_exceeded',
      message: 'Rate limit reached for key k1 on requests per min (RPM): Limit 5, Used 5, Requested 1. Please try again in 12s.',
      retryAfterMs: '12000',
    },
    {
      name: "tokens per minute: the request's estimate is what it asked",
      checked: {
        rates: { ok: false, refused: 1, used: 700, retryAfterMs: 7_250, states: [rateState, { limit: 1_000, remaining: 300, resetMs: 42_000 }] },
      },
      code: 'rate_limit_exceeded',
      message: 'Rate limit reached for project p1 on tokens per min (TPM): Limit 1000, Used 700, Requested 420. Please try again in 7.25s.',
      retryAfterMs: '7250',
    },
    {
      name: 'every slot taken: 429 rate_limit_exceeded, retry in a second',
      checked: { slots: { ok: false, refused: 0, inUse: [2] } },
      code: 'rate_limit_exceeded',
      message: 'Too many concurrent requests for project p1: at most 2 may be in progress at once. Please try again when one has finished.',
      retryAfterMs: '1000',
    },
    {
      name: "the budget's refusal comes first: a retry does not pass it",
      checked: {
        budget: { ok: false, window: day, spentNanos: toNanos(1), reservedNanos: 0 },
        rates: { ok: false, refused: 0, used: 5, retryAfterMs: 12_000, states: [rateState, rateState] },
        slots: { ok: false, refused: 0, inUse: [2] },
      },
      code: 'insufficient_quota',
      message: 'You exceeded your current quota: the daily budget of $1 of key k1 is used up ($1 spent). It resets at 2026-11-25T00:00:00.000Z.',
      retryAfterMs: String(END - NOW),
    },
    {
      name: 'a per-minute limit before the slots',
      checked: {
        rates: { ok: false, refused: 0, used: 5, retryAfterMs: 12_000, states: [rateState, rateState] },
        slots: { ok: false, refused: 0, inUse: [2] },
      },
      code: 'rate_limit_exceeded',
      message: 'Rate limit reached for key k1 on requests per min (RPM): Limit 5, Used 5, Requested 1. Please try again in 12s.',
      retryAfterMs: '12000',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const err = refusal(c.checked);
      assert.ok(err);
      assert.deepEqual([err.status, err.code, err.message], [429, c.code, c.message]);
      // The limit headers of the request, and when to try again (a spent budget: not before it resets).
      assert.deepEqual(err.headers, {
        ...limitHeaders,
        'retry-after': String(Math.ceil(Number(c.retryAfterMs) / 1000)),
        'retry-after-ms': c.retryAfterMs,
        ...(c.code === 'insufficient_quota' ? { 'x-should-retry': 'false' } : {}),
      });
    });
  }
});
