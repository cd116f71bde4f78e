import { quote } from './read-sse.ts';
import { asObject, type Frame, type Report, type RuleFamily } from './types.ts';

/**
 * Every event has a `type` equal to its `event:` name (when the server names it), the first one is
 * response.created, `sequence_number` starts at 0 and grows by one, and every response object
 * carried (created, in_progress, the terminal event) has the same id.
 */
export function responsesFrameRules(): RuleFamily {
  let first = true;
  let expected: number | null = 0;
  let missingReported = false;
  let id: { value: unknown; at: number } | undefined;
  return {
    frame(f: Frame, report: Report) {
      const json = f.json;
      if (!json) return;
      const type = json.type;
      if (typeof type !== 'string') report(f.n, 'responses/event-type', 'an event without a type');
      else if (f.event !== undefined && f.event !== type)
        report(f.n, 'responses/event-type', `\`event: ${f.event}\` but the type is ${quote(type)}`);
      if (first && type !== 'response.created')
        report(f.n, 'responses/created-first', `the first event is ${quote(String(type))}, not response.created`);
      first = false;

      const seq = json.sequence_number;
      if (typeof seq !== 'number' || !Number.isInteger(seq)) {
        // Reported once: a server that sends none would otherwise fill the report.
        if (!missingReported) report(f.n, 'responses/sequence', 'no sequence_number (later events without one are not reported)');
        missingReported = true;
        expected = null;
      } else {
        if (expected !== null && seq !== expected)
          report(f.n, 'responses/sequence', `sequence_number ${seq}, expected ${expected}`);
        expected = seq + 1;
      }

      const responseId = asObject(json.response)?.id;
      if (responseId === undefined) return;
      if (!id) id = { value: responseId, at: f.n };
      else if (responseId !== id.value) {
        report(
          f.n,
          'responses/stable-id',
          `response id ${quote(String(responseId))} is not ${quote(String(id.value))} (frame ${id.at})`,
        );
      }
    },
    end() {},
  };
}
