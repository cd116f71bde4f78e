import { carriesOutput, choiceIndex, classifyChatFrame } from './chat-frame.ts';
import { quote } from './read-sse.ts';
import { asObject, type Frame, type Report, type RuleFamily } from './types.ts';

interface ChoiceState {
  finishedAt: number | null;
  /** A repeated role is reported once per choice: some servers repeat it on every delta. */
  roleRepeated: boolean;
}

/**
 * Per choice: the first delta carries `role: "assistant"` and no later one does; exactly one
 * finish_reason, after every delta of that choice (a failed stream may leave choices unfinished:
 * its error frame says why). Every chunk carries the same `id`.
 */
export function chatChoiceRules(): RuleFamily {
  const choices = new Map<number, ChoiceState>();
  let id: { value: unknown; at: number } | undefined;
  // Each wrong id is reported at its first frame only.
  const wrongIds = new Set<unknown>();
  let failed = false;

  const checkId = (n: number, chunk: Record<string, unknown>, report: Report) => {
    const chunkId = chunk.id;
    if (chunkId === undefined) {
      // The accounting profile's flat frames (`type`, `data`, `provider`) may leave out the envelope.
      if (chunk.type === undefined) report(n, 'chat/stable-id', 'a chunk without an id');
    } else if (!id) {
      id = { value: chunkId, at: n };
    } else if (chunkId !== id.value && !wrongIds.has(chunkId)) {
      wrongIds.add(chunkId);
      report(n, 'chat/stable-id', `id ${quote(String(chunkId))} is not ${quote(String(id.value))} (frame ${id.at})`);
    }
  };

  /** The role on a choice's first delta only; then one finish_reason, after which no output. */
  const checkChoice = (n: number, index: number, choice: Record<string, unknown>, report: Report) => {
    const delta = asObject(choice.delta) ?? {};
    const reason = choice.finish_reason;
    const finishing = reason !== null && reason !== undefined;
    let state = choices.get(index);
    if (!state) {
      state = { finishedAt: null, roleRepeated: false };
      choices.set(index, state);
      if (delta.role !== 'assistant') report(n, 'chat/role-first', `choice ${index}'s first delta has no role "assistant"`);
    } else if (delta.role !== undefined && delta.role !== null && !state.roleRepeated) {
      state.roleRepeated = true;
      report(n, 'chat/role-first', `choice ${index} repeats the role after its first delta (reported once)`);
    }
    if (state.finishedAt !== null) {
      if (finishing) report(n, 'chat/finish-once', `choice ${index} finishes again (first at frame ${state.finishedAt})`);
      else if (carriesOutput(delta))
        report(n, 'chat/after-finish', `a delta for choice ${index} after its finish (frame ${state.finishedAt})`);
      return;
    }
    if (finishing) state.finishedAt = n;
  };

  return {
    frame(f: Frame, report: Report) {
      const frame = classifyChatFrame(f);
      if (frame.kind === 'error') failed = true;
      if (frame.kind !== 'chunk') return;
      checkId(f.n, frame.chunk, report);
      for (const choice of frame.choices) {
        const index = choiceIndex(choice);
        if (index === undefined) {
          report(f.n, 'chat/frame-kind', `a choice without a whole-number index: ${quote(String(JSON.stringify(choice.index)))}`);
          continue;
        }
        checkChoice(f.n, index, choice, report);
      }
    },
    end(report: Report) {
      if (failed) return;
      for (const [index, state] of choices) {
        if (state.finishedAt === null) report(null, 'chat/finish-once', `choice ${index} never finishes (no finish_reason)`);
      }
    },
  };
}
