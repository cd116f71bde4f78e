import type { CanonicalRequest } from '../protocol/canonical/request.ts';

/**
 * A non-streamed request under a budget (Admission.maxOutputTokens): an answer that cannot be cut
 * must fit what its reservation pays for, so its output limit is lowered to that when it asked for
 * more or for no limit. The limit keeps the name the client used; with none, the one every
 * surface sets (max_completion_tokens, reasoning included).
 */
export function capOutput(request: CanonicalRequest, cap: number | undefined): CanonicalRequest {
  if (cap === undefined) return request;
  if (request.max_completion_tokens != null) {
    return request.max_completion_tokens <= cap ? request : { ...request, max_completion_tokens: cap };
  }
  if (request.max_tokens != null) return request.max_tokens <= cap ? request : { ...request, max_tokens: cap };
  return { ...request, max_completion_tokens: cap };
}

/**
 * The same for a body relayed as the client sent it: `max_output_tokens` to an upstream's own
 * Responses API, `max_tokens` to Anthropic's Messages API.
 */
export function capRelayedOutput(
  body: Record<string, unknown>,
  cap: number | undefined,
  field: 'max_output_tokens' | 'max_tokens' = 'max_output_tokens',
): Record<string, unknown> {
  if (cap === undefined) return body;
  const own = body[field];
  return typeof own === 'number' && own <= cap ? body : { ...body, [field]: cap };
}
