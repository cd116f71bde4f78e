import { z } from 'zod';
import { choiceIndex, label, MAX_CHOICES, plainObject, str, tokenCount } from '../upstream-schema.ts';

/**
 * The parts of Gemini's GenerateContentResponse that sluice reads (lenient upstream: everything
 * else, such as safetyRatings, citationMetadata or groundingMetadata, is ignored).
 */

const flag = z.boolean().nullish();

const partialArg = z.object({
  /** RFC 9535 JSON path of the argument, e.g. `$.location` or `$.items[0].name`. */
  jsonPath: str,
  stringValue: str,
  numberValue: z.number().nullish(),
  boolValue: flag,
  /** protobuf's NullValue: `"NULL_VALUE"` or null; only its presence matters. */
  nullValue: z.unknown().optional(),
  /** More of the same (string) value follows in the next PartialArg for this path. */
  willContinue: flag,
});

const functionCall = z.object({
  id: str,
  name: str,
  args: plainObject.nullish(),
  /** Vertex streamed function-call arguments (`streamFunctionCallArguments`). */
  partialArgs: z.array(partialArg).nullish(),
  willContinue: flag,
});

const part = z.object({
  text: str,
  /** The text is a thought summary (only sent with `thinkingConfig.includeThoughts`). */
  thought: flag,
  /** Opaque reasoning state; may ride on any part, including an empty text part. */
  thoughtSignature: str,
  functionCall: functionCall.nullish(),
});

const logprobsCandidate = z.object({ token: str, logProbability: z.number().nullish() });

const logprobsResult = z.object({
  chosenCandidates: z.array(logprobsCandidate).nullish(),
  topCandidates: z.array(z.object({ candidates: z.array(logprobsCandidate).nullish() })).nullish(),
});

const candidate = z.object({
  index: choiceIndex.nullish(),
  content: z.object({ parts: z.array(part).nullish() }).nullish(),
  finishReason: str,
  logprobsResult: logprobsResult.nullish(),
});

const usageMetadata = z.object({
  promptTokenCount: tokenCount,
  cachedContentTokenCount: tokenCount,
  candidatesTokenCount: tokenCount,
  toolUsePromptTokenCount: tokenCount,
  thoughtsTokenCount: tokenCount,
  totalTokenCount: tokenCount,
});

export const geminiResponseSchema = z.object({
  // A candidate without `index` is numbered by its position, which must stay a valid choice index too.
  candidates: z.array(candidate).max(MAX_CHOICES).nullish(),
  promptFeedback: z.object({ blockReason: str }).nullish(),
  usageMetadata: usageMetadata.nullish(),
  modelVersion: label,
  responseId: label,
  /** An error reported inside a 200 stream (read by map-error.ts). */
  error: z.unknown().optional(),
});

export type GeminiCandidate = z.infer<typeof candidate>;
export type GeminiPart = z.infer<typeof part>;
export type GeminiFunctionCall = z.infer<typeof functionCall>;
export type GeminiPartialArg = z.infer<typeof partialArg>;
export type GeminiUsageMetadata = z.infer<typeof usageMetadata>;
export type GeminiLogprobsCandidate = z.infer<typeof logprobsCandidate>;
export type GeminiLogprobsResult = z.infer<typeof logprobsResult>;
