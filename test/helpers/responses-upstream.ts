/** What an upstream's own Responses API answers, for fake upstreams: the ids it hands out. */
export interface UpstreamIds {
  response: string;
  message: string;
  /** The conversation the response is part of, if any (`conversation: {id}` in the response). */
  conversation?: string;
}

const DEFAULT_IDS: UpstreamIds = { response: 'resp_up', message: 'msg_up' };

/** A response object with one message of `text`, as the upstream ends it (completed, with usage). */
export function responseJson(text: string, ids: UpstreamIds = DEFAULT_IDS, outputTokens = 1): Record<string, unknown> {
  return {
    ...responseShell(ids, 'completed'),
    output: [messageItem(ids, 'completed', text)],
    usage: { input_tokens: 10, output_tokens: outputTokens, total_tokens: 10 + outputTokens },
  };
}

/** An OpenAI Responses stream: one message whose text comes in `pieces`, numbered like OpenAI's. */
export function responsesSse(pieces: readonly string[], ids: UpstreamIds = DEFAULT_IDS): string {
  let sequence = 0;
  const event = (type: string, fields: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`;
  const where = { item_id: ids.message, output_index: 0, content_index: 0 };
  const item = messageItem(ids, 'in_progress');
  const text = pieces.join('');
  const done = responseJson(text, ids, pieces.length);
  const [message] = done.output as Record<string, any>[];
  let body = event('response.created', { response: responseShell(ids, 'in_progress') });
  body += event('response.in_progress', { response: responseShell(ids, 'in_progress') });
  body += event('response.output_item.added', { output_index: 0, item });
  body += event('response.content_part.added', { ...where, part: { type: 'output_text', text: '', annotations: [] } });
  for (const delta of pieces) body += event('response.output_text.delta', { ...where, delta });
  body += event('response.output_text.done', { ...where, text });
  body += event('response.content_part.done', { ...where, part: message.content[0] });
  body += event('response.output_item.done', { output_index: 0, item: message });
  return body + event('response.completed', { response: done });
}

function responseShell(ids: UpstreamIds, status: string): Record<string, unknown> {
  return {
    id: ids.response,
    object: 'response',
    created_at: 1,
    status,
    error: null,
    incomplete_details: null,
    model: 'gpt-test',
    output: [],
    usage: null,
    ...(ids.conversation ? { conversation: { id: ids.conversation } } : {}),
  };
}

function messageItem(ids: UpstreamIds, status: string, text?: string): Record<string, unknown> {
  const content = text === undefined ? [] : [{ type: 'output_text', text, annotations: [] }];
  return { id: ids.message, type: 'message', status, role: 'assistant', content };
}
