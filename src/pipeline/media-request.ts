import { countInputTokens } from '../accounting/count-tokens.ts';
import { estimateInputTokens } from '../accounting/estimate-tokens.ts';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import type { PreparedRequest } from './model-operation.ts';

/**
 * The canonical request of an images or audio request: its text (a prompt, the text to speak) as
 * one user message, what the ledger keeps as its prompt (store_content) and a trace records, and
 * `n` for the images asked for (each reserves its output). What the provider is sent is the body
 * as the client sent it.
 */
export function mediaCanonical(model: string, text: string, fields: { n?: number; user?: string } = {}): CanonicalRequest {
  return {
    model,
    messages: [{ role: 'user', content: text }],
    ...(fields.n !== undefined ? { n: fields.n } : {}),
    ...(fields.user !== undefined ? { user: fields.user } : {}),
  };
}

/**
 * The input's tokens when they are one text with no chat framing (a prompt, the text to speak):
 * the fast estimate the admission charges and reserves, and the BPE count the record takes when
 * the upstream reports none.
 */
export function textInput(text: string): NonNullable<PreparedRequest['input']> {
  const texts = text === '' ? [] : [text];
  return {
    estimatedTokens: estimateInputTokens(texts),
    count: (model, signal, limits) => countInputTokens(texts, model, signal, limits),
  };
}
