import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type AttemptEvent, type AttemptState, next, TRANSITIONS } from './attempt-states.ts';

const STATES = Object.keys(TRANSITIONS) as AttemptState[];
const TERMINAL: readonly AttemptState[] = ['finished', 'failed'];

/** Feeds `events` from `connecting`, returning every state passed through. */
function walk(...events: AttemptEvent[]): AttemptState[] {
  const states: AttemptState[] = ['connecting'];
  for (const event of events) states.push(next(states[states.length - 1], event));
  return states;
}

describe('the attempt states', () => {
  it('a first candidate that answers: accepted, reads held until the output, then passed through', () => {
    assert.deepEqual(walk('accepted', 'read-without-output', 'read-with-output', 'read', 'ended'), [
      'connecting',
      'waiting',
      'waiting',
      'committed',
      'committed',
      'finished',
    ]);
  });

  it('every failure before the answer is a switch; the fallback tries the next candidate', () => {
    for (const event of ['error-before-answer', 'ended-before-answer', 'ttft-timeout'] as const) {
      assert.deepEqual(walk('accepted', event, 'fallback', 'accepted').slice(2), ['switching', 'connecting', 'waiting'], event);
    }
    assert.deepEqual(walk('refused', 'fallback', 'ttft-timeout', 'fallback').slice(1), ['switching', 'connecting', 'switching', 'connecting']);
  });

  it("without a fallback the attempt's failure is the stream's, as it would be unrouted", () => {
    assert.deepEqual(walk('refused', 'no-fallback', 'error').slice(1), ['switching', 'committed', 'failed']);
    assert.deepEqual(walk('accepted', 'ended-before-answer', 'no-fallback', 'ended').slice(2), ['switching', 'committed', 'finished']);
    // The last candidate's own error event goes on to the stream, which ends on it.
    assert.deepEqual(walk('accepted', 'error-before-answer', 'no-fallback', 'read', 'reader-left').slice(2), [
      'switching',
      'committed',
      'committed',
      'finished',
    ]);
  });

  it('once committed the model is never switched mid-answer', () => {
    for (const event of ['fallback', 'error-before-answer', 'ttft-timeout', 'refused'] as const) {
      assert.throws(() => next('committed', event), /An attempt in `committed` cannot take/, event);
    }
  });

  it('a reader that leaves releases the attempt, before or after the answer', () => {
    assert.equal(next('waiting', 'reader-left'), 'finished');
    assert.equal(next('committed', 'reader-left'), 'finished');
  });

  it('the terminal states take no event', () => {
    for (const state of TERMINAL) assert.deepEqual(TRANSITIONS[state], {}, state);
  });

  it('every state is reachable from `connecting`, and every state can end', () => {
    const reachable = (from: AttemptState) => {
      const seen = new Set<AttemptState>([from]);
      for (const state of seen) for (const to of Object.values(TRANSITIONS[state])) seen.add(to);
      return seen;
    };
    assert.deepEqual([...reachable('connecting')].sort(), [...STATES].sort());
    for (const state of STATES)
      assert.ok(
        [...reachable(state)].some((s) => TERMINAL.includes(s)),
        `${state} never ends`,
      );
  });
});
