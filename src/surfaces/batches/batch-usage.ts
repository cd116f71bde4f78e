import { convertAnthropicUsage, type AnthropicUsage } from '../../providers/anthropic/usage.ts';
import { convertOpenAIFamilyUsage, type OpenAIFamilyUsage } from '../../providers/openai-compatible/convert-usage.ts';
import { sumTokenCounts, type Usage } from '../../protocol/canonical/usage.ts';

/** A batch's usage of one model: the sum over its answered requests. */
export interface ModelUsage {
  model: string;
  requests: number;
  usage: Usage;
}

type Json = Record<string, unknown>;

const object = (value: unknown): Json | undefined =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;

/**
 * The usage in an OpenAI batch's output file: a JSON line per request,
 * `{"custom_id", "response": {"status_code", "body": {"model", "usage"}}, "error"}`. The body is
 * a chat completion (prompt_tokens…), a Responses response (input_tokens…) or an embeddings
 * answer (prompt_tokens only). A line that is not JSON, or has no usage, counts nothing.
 */
export function openAIBatchUsage(jsonl: string): ModelUsage[] {
  const sums = new Map<string, ModelUsage>();
  for (const line of lines(jsonl)) {
    const body = object(object(line.response)?.body);
    const usage = object(body?.usage);
    if (!body || !usage || typeof body.model !== 'string') continue;
    add(sums, body.model, convertOpenAIFamilyUsage(familyShape(usage)));
  }
  return [...sums.values()];
}

/**
 * The usage in Anthropic's Message Batch results: a JSON line per request,
 * `{"custom_id", "result": {"type": "succeeded", "message": {"model", "usage"}}}`; errored,
 * canceled and expired requests are not billed, and count nothing.
 */
export function anthropicBatchUsage(jsonl: string): ModelUsage[] {
  const sums = new Map<string, ModelUsage>();
  for (const line of lines(jsonl)) {
    const result = object(line.result);
    const message = object(result?.message);
    const usage = object(message?.usage);
    if (result?.type !== 'succeeded' || !message || !usage || typeof message.model !== 'string') continue;
    add(sums, message.model, convertAnthropicUsage(usage as AnthropicUsage));
  }
  return [...sums.values()];
}

/** A Responses usage block (input_tokens…) read as the chat one (prompt_tokens…); a chat one as it is. */
function familyShape(usage: Json): OpenAIFamilyUsage {
  if (usage.input_tokens === undefined) return usage as OpenAIFamilyUsage;
  return {
    prompt_tokens: usage.input_tokens as number,
    completion_tokens: usage.output_tokens as number,
    prompt_tokens_details: { cached_tokens: object(usage.input_tokens_details)?.cached_tokens as number | undefined },
    completion_tokens_details: { reasoning_tokens: object(usage.output_tokens_details)?.reasoning_tokens as number | undefined },
  };
}

function* lines(jsonl: string): Generator<Json> {
  for (const text of jsonl.split('\n')) {
    if (!text.trim()) continue;
    try {
      const parsed = object(JSON.parse(text));
      if (parsed) yield parsed;
    } catch {
      // A line that is not JSON is not a request's result: it counts nothing.
    }
  }
}

const SUMMED = [
  'inputTokens',
  'outputTokens',
  'cachedInputTokens',
  'cacheWriteTokens',
  'reasoningTokens',
  'audioInputTokens',
  'audioOutputTokens',
] as const;

function add(sums: Map<string, ModelUsage>, model: string, usage: Usage): void {
  const sum = sums.get(model);
  if (!sum) {
    const first: Usage = { ...usage };
    delete first.invalid;
    sums.set(model, { model, requests: 1, usage: first });
    return;
  }
  sum.requests++;
  for (const field of SUMMED) {
    if (usage[field] !== undefined || sum.usage[field] !== undefined)
      sum.usage[field] = sumTokenCounts(sum.usage[field], usage[field]);
  }
}
