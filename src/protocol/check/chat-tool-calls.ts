import { choiceIndex, classifyChatFrame } from './chat-frame.ts';
import { quote } from './read-sse.ts';
import { asObject, type Frame, type Report, type RuleFamily } from './types.ts';

/** A choice's tool calls so far: tool-call index -> the call's id (or '' when it had none); and call id -> its index. */
interface ChoiceCalls {
  byIndex: Map<number, string>;
  byId: Map<string, number>;
}

/**
 * Tool-call deltas: each call has its own `index`, and the first delta of an index carries the
 * call's `id` and `function.name` (later ones only argument pieces; repeating the same id is
 * harmless, a different one means two calls share an index).
 */
export function chatToolCallRules(): RuleFamily {
  // Per choice index.
  const calls = new Map<number, ChoiceCalls>();
  return {
    frame(f: Frame, report: Report) {
      const frame = classifyChatFrame(f);
      if (frame.kind !== 'chunk') return;
      for (const choice of frame.choices) {
        const index = choiceIndex(choice);
        const toolCalls = asObject(choice.delta)?.tool_calls;
        if (index === undefined || !Array.isArray(toolCalls)) continue;
        let state = calls.get(index);
        if (!state) calls.set(index, (state = { byIndex: new Map(), byId: new Map() }));
        for (const raw of toolCalls) checkToolCall(f.n, raw, state, report);
      }
    },
    end() {},
  };
}

/** One tool-call delta of a choice, against the calls of that choice seen before. */
function checkToolCall(n: number, raw: unknown, state: ChoiceCalls, report: Report): void {
  const call = asObject(raw) ?? {};
  const at = call.index;
  if (typeof at !== 'number' || !Number.isInteger(at) || at < 0) {
    report(n, 'chat/tool-call-index', `a tool call without a whole-number index: ${quote(JSON.stringify(raw))}`);
    return;
  }
  const callId = typeof call.id === 'string' && call.id !== '' ? call.id : undefined;
  const known = state.byIndex.get(at);
  if (known === undefined) return checkFirstDelta(n, at, callId, call, state, report);
  if (callId !== undefined && known !== '' && callId !== known) {
    report(n, 'chat/tool-call-index', `index ${at} belongs to call ${quote(known)}, not ${quote(callId)}: two calls share it`);
  }
}

/** The first delta of index `at` names its call (id and function.name), an id no other index has. */
function checkFirstDelta(
  n: number,
  at: number,
  callId: string | undefined,
  call: Record<string, unknown>,
  state: ChoiceCalls,
  report: Report,
): void {
  const name = asObject(call.function)?.name;
  if (!callId || typeof name !== 'string' || name === '') {
    report(n, 'chat/tool-call-first-delta', `tool call ${at}'s first delta has no ${callId ? 'function.name' : 'id'}`);
  }
  state.byIndex.set(at, callId ?? '');
  if (callId === undefined) return;
  const other = state.byId.get(callId);
  if (other !== undefined) report(n, 'chat/tool-call-index', `call ${quote(callId)} appears at index ${other} and ${at}`);
  else state.byId.set(callId, at);
}
