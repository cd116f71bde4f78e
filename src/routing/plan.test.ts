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
