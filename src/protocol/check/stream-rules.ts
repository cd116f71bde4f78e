import { quote } from './read-sse.ts';
import type { Frame, Report, RuleFamily } from './types.ts';

/**
 * What holds on either surface: every data payload is a JSON object or the literal `[DONE]`,
 * `[DONE]` is the last frame (required on chat completions; the Responses API ends at its terminal
 * event and OpenAI sends no `[DONE]` there, sluice does), and `id:` lines, when a server sends them
 * for resuming, never repeat.
 */
export function streamRules(options: { doneRequired: boolean }): RuleFamily {
  let frames = 0;
  let doneAt: number | null = null;
  const ids = new Map<string, number>();
  return {
    frame(f: Frame, report: Report) {
      frames += 1;
      if (doneAt !== null) report(f.n, 'done/after', `a frame after [DONE] (frame ${doneAt}): ${quote(f.data)}`);
      if (f.data === '[DONE]') {
        if (f.event !== undefined && f.event !== 'message') report(f.n, 'sse/json', `[DONE] sent as \`event: ${f.event}\``);
        doneAt ??= f.n;
      } else if (!f.json) {
        report(f.n, 'sse/json', `data is not a JSON object: ${quote(f.data)}`);
      }
      if (f.id !== undefined && f.id !== '') {
        const first = ids.get(f.id);
        if (first !== undefined) report(f.n, 'sse/id-unique', `id ${quote(f.id)} was already frame ${first}'s`);
        else ids.set(f.id, f.n);
      }
    },
    end(report: Report) {
      if (frames === 0) return report(null, 'stream/empty', 'no frames at all');
      if (doneAt === null && options.doneRequired) report(null, 'done/missing', 'the stream ends without data: [DONE]');
    },
  };
}
