import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LimitState } from '../limits/rate-limit-headers.ts';
import type { Checked } from './check-charges.ts';
import { limitHeaders, limitWarning } from './limit-standing.ts';
import type { Plan } from './plan-charges.ts';

const plan: Plan = {
  charges: [
    { subject: 'key:k1', kind: 'requests', limit: 60, points: 1 },
    { subject: 'key:k1', kind: 'tokens', limit: 1_000, points: 30 },
    { subject: 'project:p1', kind: 'requests', limit: 600, points: 1 },
  ],
  scopes: ['key', 'key', 'project'],
  claims: [
    { subject: 'key:k1', limit: 4 },
    { subject: 'project:p1', limit: 10 },
  ],
  budget: undefined,
  holdMs: 60_000,
  promptTokens: 30,
};
const state = (limit: number, remaining: number, resetMs = 1_000): LimitState => ({ limit, remaining, resetMs });

describe('limitHeaders', () => {
  it("gives per kind the limit with less left, the key's or its project's", () => {
    const checked: Checked = {
      rates: { ok: true, states: [state(60, 50), state(1_000, 970, 1_800), state(600, 5, 59_000)] },
      slots: { ok: true, inUse: [1, 9] },
      budget: undefined,
    };
    assert.deepEqual(limitHeaders(plan, checked), {
      'x-ratelimit-limit-requests': '600',
      'x-ratelimit-remaining-requests': '5',
      'x-ratelimit-reset-requests': '59s',
      'x-ratelimit-limit-tokens': '1000',
      'x-ratelimit-remaining-tokens': '970',
      'x-ratelimit-reset-tokens': '1.8s',
      'ratelimit-policy': '"requests";q=600;w=60, "concurrency";q=10;qu="concurrent-requests"',
      ratelimit: '"requests";r=5;t=59, "concurrency";r=1',
    });
  });

  it('a refused request still says where it stands; a slot over its limit has none left, not fewer than none', () => {
    const checked: Checked = { rates: undefined, slots: { ok: false, refused: 0, inUse: [5, 0] }, budget: undefined };
    assert.deepEqual(limitHeaders(plan, checked), {
      'ratelimit-policy': '"concurrency";q=4;qu="concurrent-requests"',
      ratelimit: '"concurrency";r=0',
    });
  });

  it('no limit, no header', () => {
    assert.deepEqual(limitHeaders(plan, { rates: undefined, slots: undefined, budget: undefined }), {});
  });
});

describe('limitWarning', () => {
  const cases: { name: string; states: LimitState[]; warning: ReturnType<typeof limitWarning> }[] = [
    { name: 'none while every limit has more than 10% left', states: [state(60, 7), state(1_000, 101), state(600, 61)], warning: undefined },
    {
      name: 'a limit at 10% left warns',
      states: [state(60, 6, 9_000), state(1_000, 500), state(600, 300)],
      warning: { scope: 'key', limitType: 'requests', limit: 60, remaining: 6, resetMs: 9_000 },
    },
    {
      name: 'the tightest share of the ones near their end, whoever owns it',
      states: [state(60, 5), state(1_000, 90), state(600, 6, 30_000)],
      warning: { scope: 'project', limitType: 'requests', limit: 600, remaining: 6, resetMs: 30_000 },
    },
    {
      name: 'of equal shares, the first',
      states: [state(60, 3), state(1_000, 50, 2_000), state(600, 30)],
      warning: { scope: 'key', limitType: 'requests', limit: 60, remaining: 3, resetMs: 1_000 },
    },
  ];
  for (const c of cases) {
    it(c.name, () => assert.deepEqual(limitWarning(plan, { ok: true, states: c.states }), c.warning));
  }

  it('none without per-minute limits', () => {
    assert.equal(limitWarning(plan, undefined), undefined);
  });
});
