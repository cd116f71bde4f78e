import { z } from 'zod';
import { errors } from '../errors/catalog.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import { findTooDeep, MAX_JSON_DEPTH } from '../protocol/http/json-depth.ts';

/**
 * Shared pieces of the upstream payload schemas. Every value sluice copies from an upstream
 * payload into what it sends (choice indexes, ids, names, text, logprobs, usage) is checked here
 * at decode time, so a hostile or broken upstream becomes `upstream_malformed_stream`, never
 * invalid JSON in a client frame nor a TypeError. The schemas name only the fields sluice reads
 * (lenient about everything else, design principle 3). zod costs about 0.2 us per chat chunk
 * (measured on a 20-token OpenAI chunk, after warm-up), less than the JSON.parse before it.
 */

/** The chat schema's max `n`: a candidate index is spliced into every frame and sizes per-choice state. */
export const MAX_CHOICES = 128;

export const choiceIndex = z.number().int().min(0).lt(MAX_CHOICES);

/** A join key (tool-call or content-block index): only looked up, never sent, so any safe integer >= 0. */
export const joinIndex = z.number().int().min(0);

/**
 * A token count, passed on as it came: every usage converter reads its counts through
 * normalizeTokenCounts (protocol/canonical/usage.ts), the one door for them, which reads a value
 * that is not a count as 0 and flags the usage `invalid` rather than failing an answer that was
 * delivered. Typed as the converters declare it; they check it at run time.
 */
export const tokenCount = z.custom<number>().optional();

/** A string field; null reads as absent. */
export const str = z.string().nullish();

/**
 * Metadata sluice only echoes back (upstream id, model version, system_fingerprint): a value of
 * the wrong type is dropped rather than failing an answer that is otherwise fine.
 */
export const label = z
  .string()
  .nullish()
  .catch(undefined)
  .transform((v) => v ?? undefined)
  .optional();

/**
 * A JSON value passed on as it came (a tool call's input), no deeper than a client body may be:
 * sluice re-serializes it as the call's arguments, and JSON.stringify overflows the stack on the
 * ~8,000-level nesting that JSON.parse accepts (found by fuzz/response-decoders.ts).
 */
export const jsonValue = z.custom<unknown>((v) => findTooDeep(v) === null, `nested deeper than ${MAX_JSON_DEPTH} levels`);

/** A JSON object passed on as it came (tool arguments): checked, not copied; as deep as jsonValue. */
export const plainObject = z.custom<Record<string, unknown>>(
  (v) => typeof v === 'object' && v !== null && !Array.isArray(v) && findTooDeep(v) === null,
  `expected an object nested at most ${MAX_JSON_DEPTH} levels`,
);

export type Checked<T> = { ok: true; value: T } | { ok: false; error: GatewayError };

/** Validates one upstream payload; the failure names the first bad field (never its value). */
export function checkPayload<T>(schema: z.ZodType<T>, value: unknown, provider: string, what: string): Checked<T> {
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  const issue = result.error.issues[0];
  const path = formatPath(issue?.path ?? []);
  const detail = path ? `${what} field ${path}: ${issue?.message}` : `${what}: ${issue?.message}`;
  return { ok: false, error: errors.malformed(provider, detail) };
}

function formatPath(path: PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}
