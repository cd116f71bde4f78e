import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RouteConfig } from '../config/schema.ts';
import { errors } from '../errors/catalog.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { ProviderAdapter } from '../providers/types.ts';
import { HealthBook } from './health.ts';
import { orderCandidates } from './order.ts';
import { planRoute, type PlanSources } from './plan.ts';

const adapter = {} as ProviderAdapter;
const resolve = (name: string) => {
  const slash = name.indexOf('/');
  if (slash <= 0) throw errors.modelNotFound(name, 'not provider/model');
  return { adapter, provider: name.slice(0, slash), model: name.slice(slash + 1), requested: name };
};

const routes: Record<string, RouteConfig> = {
  chain: {
    strategy: 'ordered',
    sticky: false,
    targets: [
      { model: 'a/one', weight: 1, ttft_timeout_s: 2, params: { temperature: 0 } },
      { model: 'b/two', weight: 1 },
    ],
  },
  weights: {
    strategy: 'weighted',
    sticky: false,
    targets: [
      { model: 'a/one', weight: 2 },
      { model: 'b/two', weight: 1 },
      { model: 'c/three', weight: 1 },
    ],
  },
  spread: {
    strategy: 'weighted',
    sticky: true,
    targets: [
      { model: 'a/one', weight: 1 },
      { model: 'b/two', weight: 1 },
      { model: 'c/three', weight: 1 },
    ],
  },
};
const sources: PlanSources = { routes, resolve };
const health = () => new HealthBook({ breakerFailures: 1, breakerOpenMs: 60_000 });
const keys = (cs: { key: string }[]) => cs.map((c) => c.key);

/** mulberry32: a seeded [0, 1) source, so a spread is the same on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

describe('planRoute', () => {
  it('expands a route into its targets, each answering as the route name', () => {
    const plan = planRoute('chain', [], sources);
    assert.deepEqual(keys(plan.primary), ['a/one', 'b/two']);
    assert.deepEqual(
      plan.primary.map((c) => [c.target.requested, c.ttftTimeoutMs, c.params, c.via]),
      [
        ['chain', 2000, { temperature: 0 }, 'chain'],
        ['chain', 0, undefined, 'chain'],
      ],
    );
  });

  it("a plain name is one target; the request's models follow, deduplicated, routes expanded", () => {
    const plan = planRoute('b/two', ['a/one', 'b/two', 'chain', 'd/four'], sources);
    assert.deepEqual(keys(plan.primary), ['b/two']);
    assert.deepEqual(keys(plan.fallbacks), ['a/one', 'd/four']);
    assert.ok(
      plan.fallbacks.every((c) => c.target.requested === 'b/two'),
      'the client is answered as the model it named',
    );
  });

  it('a fallback that resolves to nothing is a 404 naming its place in models', () => {
    assert.throws(
      () => planRoute('a/one', ['nope'], sources),
      (err: unknown) => err instanceof GatewayError && err.code === 'model_not_found' && err.param === 'models[0]',
    );
  });
});

describe('orderCandidates', () => {
  it('an ordered route keeps its order; an unavailable target moves to the end', () => {
    const plan = planRoute('chain', ['d/four'], sources);
    const book = health();
    assert.deepEqual(keys(orderCandidates(plan, book)), ['a/one', 'b/two', 'd/four']);
    book.coolDown('a/one', 10_000);
    assert.deepEqual(keys(orderCandidates(plan, book)), ['b/two', 'd/four', 'a/one']);
  });

  it('weighted: of the two drawn, the lower TTFT average goes first', () => {
    const plan = { ...planRoute('spread', [], sources), sticky: false };
    const book = health();
    book.succeeded('a/one', 500);
    book.succeeded('b/two', 100);
    book.succeeded('c/three', 300);
    // random() = 0 draws the first target, then the first of the others: a/one and b/two.
    assert.deepEqual(keys(orderCandidates(plan, book, { random: () => 0 })), ['b/two', 'c/three', 'a/one']);
    // 0.99 draws c/three, then b/two: b/two is faster.
    assert.equal(orderCandidates(plan, book, { random: () => 0.99 })[0].key, 'b/two');
  });

  it('weighted: with no TTFT to tell them apart, the first targets follow the weights', () => {
    const plan = planRoute('weights', [], sources);
    const book = health();
    for (const seed of [1, 2, 3]) {
      const random = seeded(seed);
      const picks = 400;
      const firsts: Record<string, number> = {};
      for (let i = 0; i < picks; i++) {
        const first = orderCandidates(plan, book, { random })[0].key;
        firsts[first] = (firsts[first] ?? 0) + 1;
      }
      // Weights 2:1:1; 0.07 is over three standard deviations of a share of 400 picks.
      for (const [key, share] of [
        ['a/one', 0.5],
        ['b/two', 0.25],
        ['c/three', 0.25],
      ] as const) {
        const got = (firsts[key] ?? 0) / picks;
        assert.ok(Math.abs(got - share) < 0.07, `seed ${seed}: ${key} first in ${got} of requests, weight says ${share}`);
      }
    }
  });

  it('weighted: an unhealthy target gets no share; the others keep theirs relative to each other', () => {
    const plan = planRoute('weights', [], sources);
    const book = health();
    book.failed('a/one', 'upstream_error');
    const random = seeded(7);
    const firsts: Record<string, number> = {};
    for (let i = 0; i < 400; i++) {
      const first = orderCandidates(plan, book, { random })[0].key;
      firsts[first] = (firsts[first] ?? 0) + 1;
    }
    assert.equal(firsts['a/one'], undefined);
    assert.ok(Math.abs(firsts['b/two'] / 400 - 0.5) < 0.08, `b/two first in ${firsts['b/two']} of 400`);
  });

  it('sticky: the same key picks the same healthy target every time; another key may pick another', () => {
    const plan = planRoute('spread', [], sources);
    const book = health();
    const pick = (key: string) => orderCandidates(plan, book, { stickyKey: key, random: Math.random })[0].key;
    const first = pick('user-42');
    for (let i = 0; i < 20; i++) assert.equal(pick('user-42'), first);
    const picks = new Set(Array.from({ length: 40 }, (_, i) => pick(`user-${i}`)));
    assert.ok(picks.size > 1, 'keys spread over the targets');
    book.failed(first, 'upstream_error');
    assert.notEqual(pick('user-42'), first, 'an unhealthy sticky target is left');
  });
});
