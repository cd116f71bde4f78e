/**
 * The parts of Gemini's GenerateContentResponse that sluice reads (lenient upstream: everything
 * else, such as safetyRatings, citationMetadata or groundingMetadata, is ignored).
 */
export interface GeminiResponse {
  candidates?: GeminiCandidate[] | null;
  promptFeedback?: { blockReason?: string } | null;
  usageMetadata?: GeminiUsageMetadata | null;
  modelVersion?: string;
  responseId?: string;
  /** An error reported inside a 200 stream. */
  error?: unknown;
}

export interface GeminiCandidate {
  index?: number;
  content?: { parts?: GeminiPart[] | null } | null;
  finishReason?: string;
  logprobsResult?: GeminiLogprobsResult | null;
}

export interface GeminiPart {
  text?: string;
  /** The text is a thought summary (only sent with `thinkingConfig.includeThoughts`). */
  thought?: boolean;
  /** Opaque reasoning state; may ride on any part, including an empty text part. */
  thoughtSignature?: string;
  functionCall?: GeminiFunctionCall | null;
}

export interface GeminiFunctionCall {
  id?: string;
  name?: string;
  args?: Record<string, unknown> | null;
  /** Vertex streamed function-call arguments (`streamFunctionCallArguments`). */
  partialArgs?: GeminiPartialArg[] | null;
  willContinue?: boolean;
}

export interface GeminiPartialArg {
  /** RFC 9535 JSON path of the argument, e.g. `$.location` or `$.items[0].name`. */
  jsonPath?: string;
  stringValue?: string;
  numberValue?: number;
  boolValue?: boolean;
  nullValue?: string;
  /** More of the same (string) value follows in the next PartialArg for this path. */
  willContinue?: boolean;
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  cachedContentTokenCount?: number;
  candidatesTokenCount?: number;
  toolUsePromptTokenCount?: number;
  thoughtsTokenCount?: number;
  totalTokenCount?: number;
}

export interface GeminiLogprobsCandidate {
  token?: string;
  logProbability?: number;
}

export interface GeminiLogprobsResult {
  chosenCandidates?: GeminiLogprobsCandidate[] | null;
  topCandidates?: { candidates?: GeminiLogprobsCandidate[] | null }[] | null;
}
