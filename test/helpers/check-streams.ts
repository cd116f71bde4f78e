import { checkStream, type StreamKind } from '../../src/protocol/check/check-stream.ts';

/** Hand-made streams for the conformance checker's tests: frames built one by one, then broken. */
export const DONE = 'data: [DONE]\n\n';

export const data = (json: unknown): string => `data: ${JSON.stringify(json)}\n\n`;
export const named = (event: string, json: unknown): string => `event: ${event}\ndata: ${JSON.stringify(json)}\n\n`;

/** A chat choice delta. */
export const choice = (delta: Record<string, unknown>, finish: string | null = null, index = 0) => ({
  index,
  delta,
  logprobs: null,
  finish_reason: finish,
});

/** A `chat.completion.chunk` frame with these choices (and `extra` top-level fields). */
export const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): string =>
  data({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'up/m', choices, ...extra });

export const role = (index = 0) => chunk([choice({ role: 'assistant', content: '' }, null, index)]);
export const text = (t: string, index = 0) => chunk([choice({ content: t }, null, index)]);
export const finish = (reason = 'stop', index = 0) => chunk([choice({}, reason, index)]);
export const usage = (extra: Record<string, unknown> = {}) =>
  chunk([], { usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 }, ...extra });
export const errorFrame = data({ error: { message: 'upstream went away', type: 'server_error', code: 'upstream_error' } });

/** A conforming chat stream: role, text, finish, usage, [DONE]. */
export const chatStream = (): string[] => [role(), text('Hel'), text('lo'), finish(), usage(), DONE];

/** A Responses event; sequence numbers are given by `responsesBody`. */
export const ev = (type: string, fields: Record<string, unknown> = {}) => ({ type, ...fields });

const response = (status: string) => ({ id: 'resp_1', object: 'response', status, output: [] });

/** A conforming Responses stream with one message item holding one text part. */
export const responsesEvents = (): Record<string, unknown>[] => {
  const where = { item_id: 'msg_1', output_index: 0, content_index: 0 };
  return [
    ev('response.created', { response: response('in_progress') }),
    ev('response.in_progress', { response: response('in_progress') }),
    ev('response.output_item.added', { output_index: 0, item: { type: 'message', id: 'msg_1', content: [] } }),
    ev('response.content_part.added', { ...where, part: { type: 'output_text', text: '' } }),
    ev('response.output_text.delta', { ...where, delta: 'Hi' }),
    ev('response.output_text.done', { ...where, text: 'Hi' }),
    ev('response.content_part.done', { ...where, part: { type: 'output_text', text: 'Hi' } }),
    ev('response.output_item.done', { output_index: 0, item: { type: 'message', id: 'msg_1' } }),
    ev('response.completed', { response: response('completed') }),
  ];
};

/** Named frames with `sequence_number` 0, 1, 2… (unless an event sets its own), then `[DONE]`. */
export const responsesBody = (events: Record<string, unknown>[], done = true): string =>
  events.map((e, i) => named(String(e.type), { sequence_number: i, ...e })).join('') + (done ? DONE : '');

export const responsesTerminal = (status: 'completed' | 'failed' | 'incomplete') => ev(`response.${status}`, { response: response(status) });

/** The violations of a body as `frame:rule` (frame `end` for what only the end shows), for compact assertions. */
export function violations(body: string | string[], kind?: StreamKind): string[] {
  const report = checkStream(Array.isArray(body) ? body.join('') : body, kind ? { kind } : {});
  return report.violations.map((v) => `${v.frame ?? 'end'}:${v.rule}`);
}
