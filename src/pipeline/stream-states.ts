/**
 * The states a streamed response goes through, and the events that move it: the table runStream
 * (run-stream.ts) drives, as data. docs/streams/lifecycle.md has the same table with what each
 * transition sends, and test/docs/stream-states.test.ts keeps the two the same.
 *
 * - `opening`: the upstream is being opened (its connect and headers; a route's attempts run here,
 *   routing/attempt-states.ts). Nothing is sent but heartbeats.
 * - `waiting`: the upstream accepted the request; its first output has not come yet.
 * - `streaming`: output goes out, the frames of each upstream read in one write.
 * - `draining`: the client has its whole response (the upstream's end marker came); the upstream
 *   is read to its close, within DRAIN_MS, its reads discarded.
 * - `closing`: the closing frames (usage, terminal event) are being built, then `[DONE]`.
 * - `done`: the client got a whole response. `failed`: it got an HTTP error, or the failure
 *   frames and `[DONE]`. `cancelled`: the client left; nothing more was written to it.
 */
export type StreamState = 'opening' | 'waiting' | 'streaming' | 'draining' | 'closing' | 'done' | 'failed' | 'cancelled';

/**
 * - `acknowledged`: the upstream accepted the request (open() resolved).
 * - `heartbeat`: heartbeat_s without a write; the SSE writer's own timer sends it.
 * - `read`: an upstream read that changes nothing (before the first output: an empty read).
 * - `first-output`: the first read with an item (even one without frames of its own, a `start`).
 * - `end-marker`: the source said nothing follows (an `end` event) with every output finished.
 * - `upstream-end`: the source ended with every output finished.
 * - `budget-stop`: the caller's budget would be passed by the read (Admission.watch).
 * - `truncated`: the source ended, or its end marker came, with an output unfinished.
 * - `upstream-error`: the upstream failed (refused, an error event, a malformed read, a reset), or
 *   a step of the stream threw.
 * - `idle-timeout`: no upstream read for the idle timeout, once it answered.
 * - `deadline`: the scope was aborted by the request's deadline or a shutdown past its drain time.
 * - `drain-timeout`: the upstream did not close within DRAIN_MS of its end marker.
 * - `client-gone`: the client closed the connection (under `on_disconnect: drain`, taken once the
 *   upstream was read to its end).
 * - `closed`: the closing frames and `[DONE]` went out.
 * - `closing-failed`: the closing frames could not be built (a usage or pricing bug, an abort).
 */
export type StreamEvent =
  | 'acknowledged'
  | 'heartbeat'
  | 'read'
  | 'first-output'
  | 'end-marker'
  | 'upstream-end'
  | 'budget-stop'
  | 'truncated'
  | 'upstream-error'
  | 'idle-timeout'
  | 'deadline'
  | 'drain-timeout'
  | 'client-gone'
  | 'closed'
  | 'closing-failed';

/**
 * Every transition there is; any other is a bug of the driver. A failure before `closing` ends
 * `failed` whatever sends it (streamEnd decides between an HTTP error and the failure frames);
 * after the end marker nothing can fail the client's response any more.
 */
export const TRANSITIONS: { readonly [S in StreamState]: { readonly [E in StreamEvent]?: StreamState } } = {
  opening: {
    heartbeat: 'opening',
    acknowledged: 'waiting',
    'upstream-error': 'failed',
    deadline: 'failed',
    'client-gone': 'cancelled',
  },
  waiting: {
    heartbeat: 'waiting',
    read: 'waiting',
    'first-output': 'streaming',
    'budget-stop': 'closing',
    'upstream-end': 'closing',
    truncated: 'failed',
    'upstream-error': 'failed',
    'idle-timeout': 'failed',
    deadline: 'failed',
    'client-gone': 'cancelled',
  },
  streaming: {
    heartbeat: 'streaming',
    read: 'streaming',
    'end-marker': 'draining',
    'budget-stop': 'closing',
    'upstream-end': 'closing',
    truncated: 'failed',
    'upstream-error': 'failed',
    'idle-timeout': 'failed',
    deadline: 'failed',
    'client-gone': 'cancelled',
  },
  draining: {
    read: 'draining',
    'upstream-end': 'done',
    'drain-timeout': 'done',
    'upstream-error': 'done',
    'idle-timeout': 'done',
    deadline: 'done',
    'client-gone': 'cancelled',
  },
  closing: {
    closed: 'done',
    'closing-failed': 'failed',
    'client-gone': 'cancelled',
  },
  done: {},
  failed: {},
  cancelled: {},
};

/**
 * The state `event` moves `state` to. An event the table does not have for the state is a bug of
 * the driver: it throws, so that a test that takes the path fails on it.
 */
export function next(state: StreamState, event: StreamEvent): StreamState {
  const to = TRANSITIONS[state][event];
  if (to === undefined) throw new Error(`A stream in \`${state}\` cannot take \`${event}\` (stream-states.ts).`);
  return to;
}
