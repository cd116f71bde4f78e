import { MAX_CHOICES } from '../upstream-schema.ts';
import type { Chunk } from './chunk-schema.ts';

/**
 * The shapes nearly every chunk of a stream has (text, reasoning and tool-call deltas, a finish
 * reason, usage), checked by hand: when `raw` is one of them, with every field sluice reads of
 * the type chunkSchema would let through unchanged, it is returned as the parsed chunk and zod is
 * skipped; anything else (null ids, content arrays, logprobs, annotations, a value of a wrong
 * type) returns undefined and goes through the schema, which stays the one definition of what
 * is valid. zod cost ~1.5 us per chunk alone and ~3 us in `npm run bench`'s gateway profile (60-80 us
 * of a 20-chunk stream); this check ~0.1 us. common-chunk.test.ts decodes every recording both
 * ways and requires the same events.
 *
 * Hand-written rather than a faster validator: the schema's transforms and catches (label,
 * tokenLogprob) have no equivalent in a JIT-compiled JSON Schema validator, and this is a guard
 * of a dozen fields, not a second schema.
 */
export function commonChunk(raw: unknown): Chunk | undefined {
  if (!isObject(raw)) return undefined;
  const c = raw as Record<string, unknown>;
  if (!optionalString(c.id) || !optionalString(c.model)) return undefined;
  if (!nullishString(c.system_fingerprint) || !nullishString(c.service_tier)) return undefined;
  const choices = c.choices;
  if (choices != null) {
    if (!Array.isArray(choices)) return undefined;
    for (const choice of choices) if (!commonChoice(choice)) return undefined;
  }
  if (!usageLike(c.usage)) return undefined;
  if (c.prompt_filter_results != null && !Array.isArray(c.prompt_filter_results)) return undefined;
  if (c.x_groq != null && (!isObject(c.x_groq) || !usageLike((c.x_groq as Record<string, unknown>).usage))) return undefined;
  return raw as Chunk;
}

function commonChoice(raw: unknown): boolean {
  if (!isObject(raw)) return false;
  const c = raw as Record<string, unknown>;
  const index = c.index;
  if (index != null && !(Number.isSafeInteger(index) && (index as number) >= 0 && (index as number) < MAX_CHOICES)) return false;
  if (!nullishString(c.finish_reason) || c.logprobs != null) return false;
  if (!nullishObject(c.content_filter_results)) return false;
  return commonDelta(c.delta) && commonDelta(c.message);
}

function commonDelta(raw: unknown): boolean {
  if (raw == null) return true;
  if (!isObject(raw)) return false;
  const d = raw as Record<string, unknown>;
  if (!nullishString(d.content) || !nullishString(d.reasoning_content) || !nullishString(d.reasoning)) return false;
  if (!nullishString(d.refusal) || d.annotations != null) return false;
  const calls = d.tool_calls;
  if (calls == null) return true;
  if (!Array.isArray(calls)) return false;
  for (const call of calls) if (!commonToolCall(call)) return false;
  return true;
}

function commonToolCall(raw: unknown): boolean {
  if (!isObject(raw)) return false;
  const t = raw as Record<string, unknown>;
  if (t.index != null && !(Number.isSafeInteger(t.index) && (t.index as number) >= 0)) return false;
  if (!nullishString(t.id)) return false;
  const fn = t.function;
  if (fn == null) return true;
  if (!isObject(fn)) return false;
  const f = fn as Record<string, unknown>;
  return nullishString(f.name) && nullishString(f.arguments);
}

/** Counts are read by the usage converter whatever their type (tokenCount); the detail objects must be objects. */
function usageLike(raw: unknown): boolean {
  if (raw == null) return true;
  if (!isObject(raw)) return false;
  const u = raw as Record<string, unknown>;
  return nullishObject(u.prompt_tokens_details) && nullishObject(u.completion_tokens_details);
}

function isObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function nullishObject(v: unknown): boolean {
  return v == null || isObject(v);
}

function nullishString(v: unknown): boolean {
  return v == null || typeof v === 'string';
}

/** `label` turns null into undefined: a null id or model goes through the schema. */
function optionalString(v: unknown): boolean {
  return v === undefined || typeof v === 'string';
}
