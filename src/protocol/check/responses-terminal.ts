import { isTerminal } from './responses-items.ts';
import { quote } from './read-sse.ts';
import { asObject, type Frame, type Report, type RuleFamily } from './types.ts';

const STATUS: Record<string, string> = {
  'response.completed': 'completed',
  'response.failed': 'failed',
  'response.incomplete': 'incomplete',
};

/**
 * Exactly one terminal event (response.completed, .failed or .incomplete) with the matching
 * status, and nothing after it but `[DONE]`; an `error` event comes right before response.failed,
 * as OpenAI sends it (fixtures/openai-responses/failed-insufficient-quota.jsonl).
 */
export function responsesTerminalRules(): RuleFamily {
  let terminal: { type: string; at: number } | undefined;
  let errorAt: number | null = null;
  return {
    frame(f: Frame, report: Report) {
      const e = f.json;
      if (!e) return;
      if (errorAt !== null && e.type !== 'response.failed') {
        report(
          f.n,
          'responses/terminal',
          `the error event ${errorAt} is followed by ${quote(String(e.type))}, not response.failed`,
        );
      }
      errorAt = e.type === 'error' ? f.n : null;
      if (terminal) {
        report(f.n, 'responses/terminal', `${quote(String(e.type))} after the terminal ${terminal.type} (frame ${terminal.at})`);
        return;
      }
      if (!isTerminal(e)) return;
      terminal = { type: e.type as string, at: f.n };
      const status = asObject(e.response)?.status;
      if (status !== STATUS[terminal.type])
        report(f.n, 'responses/terminal', `${terminal.type} with status ${quote(String(status))}`);
    },
    end(report: Report) {
      if (errorAt !== null)
        report(errorAt, 'responses/terminal', 'the stream ends after an error event, without response.failed');
      else if (!terminal) report(null, 'responses/terminal', 'no terminal event (response.completed, .failed or .incomplete)');
    },
  };
}
