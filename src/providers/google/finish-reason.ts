import type { FinishReason } from '../../protocol/canonical/finish-reason.ts';

/** Gemini stops because a safety or policy filter fired (candidate finishReason values). */
const FILTERED = new Set([
  'SAFETY',
  'RECITATION',
  'PROHIBITED_CONTENT',
  'BLOCKLIST',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
]);

/**
 * Gemini finishes a function-calling turn with STOP (see function-call-2.0-flash.sse), and the
 * call and the STOP may come in different chunks (vertex-streamed-function-call-args.jsonl), so
 * the caller says whether a call was seen anywhere in the candidate. Anything else
 * (MALFORMED_FUNCTION_CALL, OTHER, LANGUAGE, ...) has no OpenAI equivalent: a natural stop.
 */
export function mapGeminiFinishReason(raw: string, sawToolCall: boolean): FinishReason {
  if (raw === 'STOP') return sawToolCall ? 'tool_calls' : 'stop';
  if (raw === 'MAX_TOKENS') return 'length';
  if (FILTERED.has(raw)) return 'content_filter';
  return 'stop';
}
