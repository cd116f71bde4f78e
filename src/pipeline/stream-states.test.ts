import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { next, type StreamEvent, type StreamState, TRANSITIONS } from './stream-states.ts';

const STATES = Object.keys(TRANSITIONS) as StreamState[];
const TERMINAL: readonly StreamState[] = ['done', 'failed', 'cancelled'];

/** The states `from` leads to, itself included. */
function reachable(from: StreamState): Set<StreamState> {
  const seen = new Set<StreamState>([from]);
  for (const state of seen) for (const to of Object.values(TRANSITIONS[state])) seen.add(to);
  return seen;
}

/** Feeds `events` from `opening`, returning every state passed through. */
function walk(...events: StreamEvent[]): StreamState[] {
  const states: StreamState[] = ['opening'];
  for (const event of events) states.push(next(states[states.length - 1], event));
  return states;
}

describe('the stream states', () => {
  it('a normal stream: opened, its first output, reads, the source ends, the closing frames', () => {
    assert.deepEqual(walk('heartbeat', 'acknowledged', 'read', 'first-output', 'read', 'heartbeat', 'upstream-end', 'closed'), [
      'opening',
      'opening',
      'waiting',
      'waiting',
      'streaming',
      'streaming',
      'streaming',
      'closing',
      'done',
    ]);
  });

  it("after the end marker the client's response is whole: whatever ends the upstream then, the stream is done", () => {
    for (const event of ['upstream-end', 'drain-timeout', 'upstream-error', 'deadline', 'idle-timeout'] as const) {
      assert.equal(walk('acknowledged', 'first-output', 'end-marker', 'read', event).at(-1), 'done', event);
    }
  });

  it('every failure before the closing fails the stream, from any state before it', () => {
    for (const state of ['opening', 'waiting', 'streaming'] as const) {
      for (const event of ['upstream-error', 'deadline'] as const) assert.equal(next(state, event), 'failed', `${state} ${event}`);
    }
    for (const state of ['waiting', 'streaming'] as const) {
      for (const event of ['truncated', 'idle-timeout'] as const) assert.equal(next(state, event), 'failed', `${state} ${event}`);
    }
    assert.equal(next('closing', 'closing-failed'), 'failed');
  });

  it('the budget stops a stream before or after its first output; its closing frames end it', () => {
    assert.deepEqual(walk('acknowledged', 'budget-stop', 'closed').slice(1), ['waiting', 'closing', 'done']);
    assert.deepEqual(walk('acknowledged', 'first-output', 'budget-stop', 'closed').slice(2), ['streaming', 'closing', 'done']);
  });

  it('a client that leaves cancels the stream, whenever it leaves before the end', () => {
    for (const state of STATES.filter((s) => !TERMINAL.includes(s))) assert.equal(next(state, 'client-gone'), 'cancelled', state);
  });

  it('an impossible transition throws, naming the state and the event', () => {
    assert.throws(() => next('opening', 'first-output'), /A stream in `opening` cannot take `first-output`/);
    assert.throws(() => next('draining', 'end-marker'), /cannot take `end-marker`/);
    assert.throws(() => next('closing', 'read'), /cannot take `read`/);
  });

  it('the terminal states take no event', () => {
    for (const state of TERMINAL) assert.deepEqual(TRANSITIONS[state], {}, state);
  });

  it('every state is reachable from `opening`, and every state can end', () => {
    assert.deepEqual([...reachable('opening')].sort(), [...STATES].sort());
    for (const state of STATES) {
      const ends = [...reachable(state)].filter((s) => TERMINAL.includes(s));
      assert.ok(ends.length > 0, `${state} never ends`);
    }
  });
});
