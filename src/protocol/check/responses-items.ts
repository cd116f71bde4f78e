import { asObject, type Frame, type Report, type RuleFamily } from './types.ts';

/** The events that open something, and the `done` that closes it, keyed by what they name. */
const PAIRS: Record<string, { opens: boolean; key: (e: Record<string, unknown>) => string }> = {
  'response.output_item.added': { opens: true, key: (e) => itemKey(e) },
  'response.output_item.done': { opens: false, key: (e) => itemKey(e) },
  'response.content_part.added': { opens: true, key: (e) => contentKey(e) },
  'response.content_part.done': { opens: false, key: (e) => contentKey(e) },
  'response.reasoning_summary_part.added': { opens: true, key: (e) => summaryKey(e) },
  'response.reasoning_summary_part.done': { opens: false, key: (e) => summaryKey(e) },
};

const TERMINAL = new Set(['response.completed', 'response.failed', 'response.incomplete']);

const itemKey = (e: Record<string, unknown>) => `output item ${String(e.output_index)}`;
const contentKey = (e: Record<string, unknown>) => `content part ${String(e.content_index)} of ${itemKey(e)}`;
const summaryKey = (e: Record<string, unknown>) => `summary part ${String(e.summary_index)} of ${itemKey(e)}`;

/**
 * Every output item, content part and reasoning summary part `added` is closed by its `done`
 * before the terminal event, once; the events in between (deltas, hosted-tool progress,
 * annotations) name an item and part that are open; an item closes after its parts.
 */
export function responsesItemRules(): RuleFamily {
  // What is open, by key, with the frame that opened it; and what was closed already.
  const open = new Map<string, number>();
  const closed = new Set<string>();
  return {
    frame(f: Frame, report: Report) {
      const e = f.json;
      if (!e || typeof e.type !== 'string') return;
      const pair = PAIRS[e.type];
      if (pair) {
        const key = pair.key(e);
        if (pair.opens) {
          if (open.has(key) || closed.has(key)) report(f.n, 'responses/added-done', `${key} is added a second time`);
          if (!e.type.startsWith('response.output_item') && !open.has(itemKey(e))) {
            report(f.n, 'responses/added-done', `${key} is added outside an open ${itemKey(e)}`);
          }
          open.set(key, f.n);
          closed.delete(key);
          return;
        }
        if (!open.has(key)) {
          report(
            f.n,
            'responses/added-done',
            closed.has(key) ? `${key} is done a second time` : `${key} is done but was never added`,
          );
          return;
        }
        open.delete(key);
        closed.add(key);
        if (e.type === 'response.output_item.done') {
          for (const [inner, at] of open) {
            if (!inner.endsWith(` of ${key}`)) continue;
            report(
              f.n,
              'responses/added-done',
              `${key} is done while its ${inner.split(' of ')[0]} (added at frame ${at}) is open`,
            );
            open.delete(inner); // reported here, not again at the terminal event
          }
        }
        return;
      }
      if (TERMINAL.has(e.type)) {
        for (const [key, at] of open)
          report(f.n, 'responses/added-done', `${e.type} while ${key} (added at frame ${at}) was never done`);
        open.clear();
        return;
      }
      // A delta, a `.done` of text or arguments, hosted-tool progress: inside what it names.
      if (e.output_index === undefined) return;
      const where = e.content_index !== undefined ? contentKey(e) : e.summary_index !== undefined ? summaryKey(e) : itemKey(e);
      if (!open.has(where)) report(f.n, 'responses/added-done', `${e.type} for ${where}, which is not open`);
    },
    end() {},
  };
}

export function isTerminal(e: Record<string, unknown> | undefined): boolean {
  return typeof asObject(e)?.type === 'string' && TERMINAL.has(e?.type as string);
}
