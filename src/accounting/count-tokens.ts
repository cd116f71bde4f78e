import type { ChatRequest } from '../protocol/openai-chat/request-schema.ts';

type Counter = (text: string) => number;

let o200k: Counter | undefined;
let cl100k: Counter | undefined;

/**
 * Local token counts with a real BPE (gpt-tokenizer: the same ids as tiktoken, ~10x faster).
 * Exact for OpenAI models, an estimate for everyone else; records say `estimated` either way.
 * Loading an encoding evaluates a large module synchronously (~200 ms, ~80 MiB for o200k here):
 * the gateway loads both before it listens (`loadTokenCounters`), so no stream ever stalls on it.
 */
async function counterFor(model: string): Promise<Counter> {
  // gpt-4 / gpt-3.5 (not gpt-4o, gpt-4.1) use cl100k; everything newer, and non-OpenAI models, o200k.
  // Azure names its deployments gpt-35-turbo; routers prefix the vendor (openai/gpt-4).
  if (/^(gpt-4(?![o.])|gpt-3\.?5)/.test(model.slice(model.lastIndexOf('/') + 1))) {
    cl100k ??= (await import('gpt-tokenizer/encoding/cl100k_base')).countTokens;
    return cl100k;
  }
  o200k ??= (await import('gpt-tokenizer/encoding/o200k_base')).countTokens;
  return o200k;
}

/** Loads both encodings now (at startup), instead of on the first request that needs them. */
export async function loadTokenCounters(): Promise<void> {
  await Promise.all([counterFor('gpt-4o'), counterFor('gpt-4')]);
}

/** Per-message framing overhead of the chat format (OpenAI's published counting recipe). */
const TOKENS_PER_MESSAGE = 3;
const REPLY_PRIMING = 3;

export function promptText(request: ChatRequest): string[] {
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

export async function countPromptTokens(request: ChatRequest, model: string): Promise<number> {
  const count = await counterFor(model);
  let n = REPLY_PRIMING + request.messages.length * TOKENS_PER_MESSAGE;
  for (const text of promptText(request)) n += count(text);
  return n;
}

export async function countTextTokens(text: string, model: string): Promise<number> {
  if (!text) return 0;
  return (await counterFor(model))(text);
}
