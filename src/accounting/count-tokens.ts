import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import type { Encoding } from './count-scheduler.ts';
import { DEFAULT_LIMITS, type TallyLimits, TokenTally } from './token-tally.ts';

/**
 * Local token counts with a real BPE (gpt-tokenizer: the same ids as tiktoken, ~10x faster).
 * Exact for OpenAI models, an estimate for everyone else; records say `estimated` either way.
 * Counting runs in a worker shared fairly by all requests (count-scheduler.ts), in bounded pieces
 * and within a budget per text (token-tally.ts), past which the fast estimate takes over
 * (estimate-tokens.ts).
 */

/**
 * gpt-4 / gpt-3.5 (not gpt-4o, gpt-4.1) and OpenAI's embedding models (text-embedding-3-*, -ada-002:
 * tiktoken's model table) use cl100k; everything newer, and non-OpenAI models, o200k.
 */
export function encodingFor(model: string): Encoding {
  // Azure names its deployments gpt-35-turbo; routers prefix the vendor (openai/gpt-4).
  return /^(gpt-4(?![o.])|gpt-3\.?5|text-embedding-)/.test(model.slice(model.lastIndexOf('/') + 1)) ? 'cl100k' : 'o200k';
}

/** Per-message framing overhead of the chat format (OpenAI's published counting recipe). */
const TOKENS_PER_MESSAGE = 3;
const REPLY_PRIMING = 3;

export function promptText(request: CanonicalRequest): string[] {
  const parts: string[] = [];
  for (const m of request.messages) {
    const c = m.content;
    if (typeof c === 'string') parts.push(c);
    else if (Array.isArray(c)) for (const p of c) if ('text' in p && typeof p.text === 'string') parts.push(p.text);
    if (m.role === 'assistant' && m.tool_calls) for (const t of m.tool_calls) parts.push(t.function.name, t.function.arguments);
  }
  if (request.tools) parts.push(JSON.stringify(request.tools));
  return parts;
}

/** The prompt's tokens: each part counted apart, plus the chat format's framing. */
export async function countPromptTokens(
  request: CanonicalRequest,
  model: string,
  signal?: AbortSignal,
  limits: TallyLimits = DEFAULT_LIMITS,
): Promise<number> {
  const tally = new TokenTally(encodingFor(model), limits);
  for (const part of promptText(request)) {
    tally.add(part);
    tally.endPart();
  }
  return REPLY_PRIMING + request.messages.length * TOKENS_PER_MESSAGE + (await tally.total(signal));
}

/**
 * The tokens of an embeddings request's inputs as an embedding model counts them: each input on
 * its own, with no chat framing (OpenAI counts ["Ruby", "Python", "JavaScript"] as 3 tokens, where
 * one chat message of the three is 12); token ids count one each.
 */
export async function countInputTokens(
  inputs: readonly (string | readonly number[])[],
  model: string,
  signal?: AbortSignal,
  limits: TallyLimits = DEFAULT_LIMITS,
): Promise<number> {
  const tally = new TokenTally(encodingFor(model), limits);
  let ids = 0;
  for (const input of inputs) {
    if (typeof input === 'string') {
      tally.add(input);
      tally.endPart();
    } else ids += input.length;
  }
  return ids + (await tally.total(signal));
}

/**
 * The prompt's tokens before the request is sent, for the per-minute token charge, the budget
 * reservation and the durable journal: one token per 4 bytes of UTF-8 plus the chat framing. Each
 * is reconciled with the real usage when the request ends. The BPE count (countPromptTokens) was
 * measured at ~60 us of CPU and a worker round trip per request on this machine, three times the
 * whole admission budget (20 us) and on the way to the first token, so it is left to the
 * accountant, which needs it only when the upstream reports no usage.
 */
export function estimatePromptTokens(request: CanonicalRequest): number {
  let bytes = 0;
  for (const part of promptText(request)) bytes += Buffer.byteLength(part, 'utf8');
  return Math.ceil(bytes / 4) + REPLY_PRIMING + request.messages.length * TOKENS_PER_MESSAGE;
}

/** A tally for text that arrives in parts (a response's output), counted as one text. */
export function textTally(model: string, limits: TallyLimits = DEFAULT_LIMITS): TokenTally {
  return new TokenTally(encodingFor(model), limits);
}

export function countTextTokens(text: string, model: string, signal?: AbortSignal): Promise<number> {
  const tally = textTally(model);
  tally.add(text);
  return tally.total(signal);
}
