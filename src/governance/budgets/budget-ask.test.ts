import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import { budgetAsk, outputCap, outputChoices } from './budget-ask.ts';

const hi = (fields: Partial<CanonicalRequest> = {}): CanonicalRequest => ({
  model: 'up/m',
  messages: [{ role: 'user', content: 'Hi' }],
  ...fields,
});

/** What a budget book grants: nothing below the minimum, else the ask or the room left, whole nano-dollars. */
const grant = (want: number, min: number, room: number): number | null => (room < min ? null : Math.floor(Math.min(want, room)));

describe('outputChoices', () => {
  it('is n, or best_of where the request carries it, whichever is more; 1 by default', () => {
    assert.equal(outputChoices(hi()), 1);
    assert.equal(outputChoices(hi({ n: null })), 1);
    assert.equal(outputChoices(hi({ n: 8 })), 8);
    assert.equal(outputChoices(hi({ n: 2, extra: { best_of: 5 } })), 5);
    assert.equal(outputChoices(hi({ extra: { best_of: 'many' } })), 1);
  });
});

describe('budgetAsk and outputCap', () => {
  // $1 in, $10 out a million tokens: 1,000 and 10,000 nano-dollars a token.
  const prices = { inputNanos: 1_000, outputNanos: 10_000 };

  it('regression: n multiplies a budget: the reservation and the minimum count every choice', () => {
    const one = budgetAsk(hi({ max_tokens: 100 }), 7, prices, 4096);
    const eight = budgetAsk(hi({ max_tokens: 100, n: 8 }), 7, prices, 4096);
    assert.deepEqual(
      [one.want, one.min, eight.want, eight.min],
      [7_000 + 100 * 10_000, 7_000 + 10_000, 7_000 + 8 * 100 * 10_000, 7_000 + 8 * 10_000],
    );
  });

  it('regression: n multiplies a budget: the cap is per choice, so that all the choices fit the grant', () => {
    // $0.01 = 10,000,000 nano-dollars; the prompt costs 7,000: 999 tokens of output in all.
    const ask = budgetAsk(hi({ n: 8 }), 7, prices, 4096);
    assert.equal(outputCap(ask, 10_000_000), Math.floor(999 / 8));
    assert.equal(outputCap(budgetAsk(hi({ n: 64 }), 7, prices, 4096), 10_000_000), Math.floor(999 / 64));
    // A limit of its own that the grant covers for every choice is left as it is.
    assert.equal(outputCap(budgetAsk(hi({ n: 8, max_tokens: 100 }), 7, prices, 4096), 10_000_000), undefined);
    assert.equal(outputCap(budgetAsk(hi({ n: 8, max_tokens: 125 }), 7, prices, 4096), 10_000_000), 124);
  });

  it('a request without output (embeddings: 0 choices) reserves and needs its input alone, and is not capped', () => {
    const ask = budgetAsk(hi(), 6, prices, 4096, 0);
    assert.deepEqual([ask.want, ask.min, outputCap(ask, 6_000)], [6_000, 6_000, undefined]);
  });

  it('a free model asks for its minimum of 1 and is never capped', () => {
    const ask = budgetAsk(hi({ n: 4 }), 7, { inputNanos: 0, outputNanos: 0 }, 4096);
    assert.deepEqual([ask.want, ask.min, outputCap(ask, 1)], [0, 1, undefined]);
  });

  it('no parameter spends past the grant: admitted only with room for the minimum, and then every choice fits', () => {
    const request = fc.record({
      n: fc.option(fc.integer({ min: 1, max: 128 })),
      bestOf: fc.option(fc.integer({ min: 1, max: 20 })),
      maxTokens: fc.option(fc.integer({ min: 1, max: 200_000 })),
      promptTokens: fc.integer({ min: 0, max: 1_000_000 }),
      // Nano-dollars a token: free, cheap, and past any model's price ($1,000 a million tokens).
      inputNanos: fc.oneof(fc.constant(0), fc.double({ min: 0.001, max: 1e6, noNaN: true })),
      outputNanos: fc.oneof(fc.constant(0), fc.double({ min: 0.001, max: 1e6, noNaN: true })),
      reserveOutput: fc.integer({ min: 1, max: 100_000 }),
      // What the budget has left: nothing, a little, or a lot (up to $10,000).
      room: fc.oneof(fc.integer({ min: 0, max: 1_000 }), fc.double({ min: 0, max: 1e13, noNaN: true })),
    });
    fc.assert(
      fc.property(request, (r) => {
        const canonical = hi({
          n: r.n,
          ...(r.maxTokens !== null ? { max_completion_tokens: r.maxTokens } : {}),
          ...(r.bestOf !== null ? { extra: { best_of: r.bestOf } } : {}),
        });
        const ask = budgetAsk(canonical, r.promptTokens, { inputNanos: r.inputNanos, outputNanos: r.outputNanos }, r.reserveOutput);
        assert.ok(ask.min >= 1 && ask.min <= Math.max(1, ask.want), 'the minimum is within the ask');
        const granted = grant(ask.want, ask.min, r.room);
        if (granted === null) {
          assert.ok(r.room < ask.min);
          return;
        }
        if (r.outputNanos === 0) return;
        // The limit each choice is sent with: the cap, else its own (a cap is always set without one).
        const perChoice = outputCap(ask, granted) ?? r.maxTokens;
        assert.ok(perChoice !== null && perChoice >= 1, `every choice may answer: ${perChoice}`);
        const worst = ask.inputNanos + ask.choices * perChoice * r.outputNanos;
        // The cap's epsilon (a grant of exactly k tokens is k, not k - 1) is worth under a nano-dollar.
        assert.ok(worst <= granted + 1e-9 * r.outputNanos + 1e-6, `spends ${worst} of ${granted}`);
      }),
      { numRuns: 2_000 },
    );
  });
});
