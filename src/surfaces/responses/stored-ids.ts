/**
 * Ids of what an OpenAI Responses upstream stores (responses, their items, conversations): those a
 * request asks it to resolve, and those a response hands out. Every project is relayed with the
 * operator's one upstream key, so the upstream cannot tell projects apart: the relay lets a
 * project's key name only ids handed out to that project (relayed-ids.ts).
 */

type Json = Record<string, unknown>;

export interface StoredIdReference {
  id: string;
  kind: 'response' | 'conversation' | 'item';
  /** Where the body holds it, for the 404: `previous_response_id`, `conversation`, `input[2].id`. */
  param: string;
}

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);
const isId = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

/**
 * The stored things a Responses body refers to: `previous_response_id`, `conversation` (an id or
 * `{id}`), and every input item's `id`. OpenAI looks up any input item that carries an id, not
 * only an `item_reference` ("Item with id '…' not found. Items are not persisted when `store` is
 * set to false."), so each one names a stored item.
 */
export function referencedIds(body: Json): StoredIdReference[] {
  const refs: StoredIdReference[] = [];
  if (isId(body.previous_response_id)) {
    refs.push({ id: body.previous_response_id, kind: 'response', param: 'previous_response_id' });
  }
  const conversation = body.conversation;
  if (isId(conversation)) refs.push({ id: conversation, kind: 'conversation', param: 'conversation' });
  else if (isObject(conversation) && isId(conversation.id)) {
    refs.push({ id: conversation.id, kind: 'conversation', param: 'conversation.id' });
  }
  if (Array.isArray(body.input)) {
    body.input.forEach((item, i) => {
      if (isObject(item) && isId(item.id)) refs.push({ id: item.id, kind: 'item', param: `input[${i}].id` });
    });
  }
  return refs;
}

/** The ids a response (or a response event's `response`) hands out: its own, its conversation's, its output items'. */
export function returnedIds(response: Json): string[] {
  const ids: string[] = [];
  if (isId(response.id)) ids.push(response.id);
  const conversation = response.conversation;
  if (isObject(conversation) && isId(conversation.id)) ids.push(conversation.id);
  if (Array.isArray(response.output)) for (const item of response.output) if (isObject(item) && isId(item.id)) ids.push(item.id);
  return ids;
}
