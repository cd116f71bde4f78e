/**
 * The states of a routed stream's attempt loop (route-stream.ts) and the events that move it, as
 * data. It runs inside the stream's `opening` and `waiting` (pipeline/stream-states.ts): the
 * stream is opened once a target accepted, and the loop may still switch targets until one
 * answers. docs/streams/lifecycle.md has the same table with what each transition sends, and
 * test/docs/stream-states.test.ts keeps the two the same.
 *
 * - `connecting`: a candidate's upstream request is being made (its connect and headers).
 * - `waiting`: the candidate accepted; its reads are held until one shows an answer or a failure.
 * - `switching`: the attempt failed before answering: the failure is recorded (health, attempt
 *   log) and the policy and the plan decide whether the next candidate is tried.
 * - `committed`: the attempt is the request's: it answered, or nothing is left to fall back to
 *   (its failure is the stream's, as it would be unrouted). Its reads pass through as they come.
 * - `finished`: the stream ended, or its reader left; the attempt's upstream is released.
 * - `failed`: the failure was thrown to the stream; the attempt's upstream is released.
 */
export type AttemptState = 'connecting' | 'waiting' | 'switching' | 'committed' | 'finished' | 'failed';

/**
 * - `accepted`: the upstream answered 2xx. `refused`: a connect error or an HTTP error status.
 * - `ttft-timeout`: no output within the target's ttft_timeout_s: the attempt is cut.
 * - `read-with-output` / `read-without-output`: a read that shows the attempt answering (output, a
 *   finish, the end marker: an empty answer is an answer), or that shows nothing yet (`start`,
 *   `usage`, an empty read).
 * - `error-before-answer`: an error event, or a read that threw (a reset, a malformed stream),
 *   before the answer. `ended-before-answer`: the stream ended without a word.
 * - `fallback` / `no-fallback`: the next candidate is tried, or not (the policy, the last
 *   candidate, the request's own abort).
 * - `read`, `ended`: a committed attempt's read, its end. `error`: its failure, thrown to the
 *   stream; or a step of the loop threw (a reading's verdict, the accountant told of a switch).
 * - `reader-left`: the stream's reader let go of the attempt (return()).
 */
export type AttemptEvent =
  | 'accepted'
  | 'refused'
  | 'ttft-timeout'
  | 'read-with-output'
  | 'read-without-output'
  | 'error-before-answer'
  | 'ended-before-answer'
  | 'fallback'
  | 'no-fallback'
  | 'read'
  | 'ended'
  | 'error'
  | 'reader-left';

/** Every transition there is; any other is a bug of the loop. */
export const TRANSITIONS: { readonly [S in AttemptState]: { readonly [E in AttemptEvent]?: AttemptState } } = {
  connecting: {
    accepted: 'waiting',
    refused: 'switching',
    'ttft-timeout': 'switching',
    error: 'failed',
  },
  waiting: {
    'read-without-output': 'waiting',
    'read-with-output': 'committed',
    'error-before-answer': 'switching',
    'ttft-timeout': 'switching',
    'ended-before-answer': 'switching',
    'reader-left': 'finished',
    error: 'failed',
  },
  switching: {
    fallback: 'connecting',
    'no-fallback': 'committed',
    error: 'failed',
  },
  committed: {
    read: 'committed',
    ended: 'finished',
    error: 'failed',
    'reader-left': 'finished',
  },
  finished: {},
  failed: {},
};

/**
 * The state `event` moves `state` to. An event the table does not have for the state is a bug of
 * the loop: it throws, so that a test that takes the path fails on it.
 */
export function next(state: AttemptState, event: AttemptEvent): AttemptState {
  const to = TRANSITIONS[state][event];
  if (to === undefined) throw new Error(`An attempt in \`${state}\` cannot take \`${event}\` (attempt-states.ts).`);
  return to;
}
