import { GatewayError } from '../src/errors/gateway-error.ts';
import type { CanonicalEvent, TokenLogprob } from '../src/protocol/canonical/events.ts';
import { MAX_TOKEN_COUNT } from '../src/protocol/canonical/usage.ts';
import { MAX_CHOICES } from '../src/providers/upstream-schema.ts';

const REASONS = new Set(['stop', 'length', 'tool_calls', 'content_filter']);

/** Thrown with the offending event, so a failing fuzz case says what was wrong and where. */
export class EventContractError extends Error {
  override name = 'EventContractError';
}

function fail(i: number, event: unknown, rule: string): never {
  let shown: string;
  try {
    shown = JSON.stringify(event).slice(0, 300);
  } catch {
    shown = String(event);
  }
  throw new EventContractError(`event ${i}: ${rule}: ${shown}`);
}

const isString = (v: unknown) => typeof v === 'string';
const isCount = (v: unknown) =>
  v === undefined || (Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= MAX_TOKEN_COUNT);

function checkLogprobs(list: TokenLogprob[] | undefined): boolean {
  if (list === undefined) return true;
  return (
    Array.isArray(list) &&
    list.every(
      (t) =>
        isString(t.token) &&
        typeof t.logprob === 'number' &&
        Array.isArray(t.top_logprobs) &&
        (t.bytes === null || Array.isArray(t.bytes)),
    )
  );
}

/**
 * The contract a decoder's output keeps, whatever the upstream sent (events.ts, upstream-schema.ts):
 * known types only; choice indexes small integers (an encoder writes them unquoted); join indexes
 * safe integers, one tool call start per index; text fields strings; token counts normalized; a failure is a GatewayError with a
 * status an HTTP error can carry; nothing after the end marker. Events after an error may come (a
 * decoder may report a second failure of the same bytes) but are never used: the pipeline stops
 * at the first error (run-stream.ts).
 */
export function checkEvents(events: readonly CanonicalEvent[]): void {
  let endAt = -1;
  const calls = new Set<string>();
  events.forEach((e, i) => {
    if (endAt >= 0) fail(i, e, `an event after the end marker (event ${endAt})`);
    // A content filter's verdicts on the prompt belong to no choice (choice null).
    const prompt = e.type === 'content-filter' && e.choice === null;
    if ('choice' in e && !prompt && !(Number.isInteger(e.choice) && Number(e.choice) >= 0 && Number(e.choice) < MAX_CHOICES)) {
      fail(i, e, 'choice index');
    }
    switch (e.type) {
      case 'start':
        if (![e.upstreamId, e.upstreamModel].every((v) => v === undefined || isString(v))) fail(i, e, 'start ids');
        break;
      case 'text':
      case 'refusal':
        if (!isString(e.text) || !checkLogprobs(e.logprobs)) fail(i, e, 'text / logprobs');
        break;
      case 'reasoning':
        if (!isString(e.text) || ![e.signature, e.redacted].every((v) => v === undefined || isString(v))) fail(i, e, 'reasoning');
        break;
      case 'annotation': {
        const a = e.annotation;
        if (!isString(a.url) || !isString(a.title) || !Number.isSafeInteger(a.startIndex) || !Number.isSafeInteger(a.endIndex)) {
          fail(i, e, 'annotation');
        }
        break;
      }
      case 'tool-call-start':
        if (!Number.isSafeInteger(e.index) || e.index < 0 || !isString(e.id) || !isString(e.name)) fail(i, e, 'tool call start');
        // The index is the call's join key: a second start with it would orphan the first call.
        if (calls.has(`${e.choice}:${e.index}`)) fail(i, e, 'a second tool call start with the same index');
        calls.add(`${e.choice}:${e.index}`);
        break;
      case 'tool-call-delta':
        if (!Number.isSafeInteger(e.index) || e.index < 0 || !isString(e.arguments)) fail(i, e, 'tool call delta');
        break;
      case 'finish':
        if (!REASONS.has(e.reason)) fail(i, e, 'finish reason');
        break;
      case 'usage': {
        const u = e.usage;
        const counts = [u.inputTokens, u.outputTokens, u.cachedInputTokens, u.cacheWriteTokens, u.reasoningTokens];
        if (!counts.every(isCount) || u.inputTokens === undefined || u.outputTokens === undefined) fail(i, e, 'usage counts');
        break;
      }
      case 'error': {
        const err = e.error;
        if (!(err instanceof GatewayError) || !isString(err.code) || !err.code || !isString(err.message) || !err.message) {
          fail(i, e, 'error is not a GatewayError with a code and a message');
        }
        if (!Number.isInteger(err.status) || err.status < 400 || err.status > 599) fail(i, e, `error status ${err.status}`);
        break;
      }
      case 'end':
        endAt = i;
        break;
      case 'content-filter':
        if (
          e.choice === null
            ? !Array.isArray(e.results)
            : typeof e.results !== 'object' || e.results === null || Array.isArray(e.results)
        ) {
          fail(i, e, 'content filter results');
        }
        break;
      default:
        fail(i, e, 'unknown event type');
    }
  });
}

/**
 * The events the pipeline uses (up to the first error), errors as plain data, for comparing two
 * decodes of the same bytes. An error's message is left out: it quotes what was read when the
 * decoder gave up (a whole bad line, or the start of one cut by a read boundary).
 */
export function comparable(events: readonly CanonicalEvent[]): unknown[] {
  const firstError = events.findIndex((e) => e.type === 'error');
  const used = firstError === -1 ? events : events.slice(0, firstError + 1);
  return used.map((e) => (e.type === 'error' ? { type: 'error', code: e.error.code, status: e.error.status } : e));
}
