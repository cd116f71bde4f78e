import type { Candidate } from './plan.ts';

/**
 * The body a relayed candidate receives: the route's parameters for that target in place of the
 * client's, under the names the relayed API gives them. Messages: `temperature`, `top_p` and
 * `max_tokens` (from either output limit); Responses: the same with `max_output_tokens`, and
 * `reasoning.effort`. `seed` has no name in either API, nor `reasoning_effort` in Messages (its
 * thinking budget is a block the client writes): those are left to the translated targets.
 */
export function relayedBodyFor(
  body: Record<string, unknown>,
  candidate: Candidate,
  api: 'messages' | 'responses',
): Record<string, unknown> {
  const params = candidate.params;
  if (!params) return body;
  const out = { ...body };
  if (params.temperature !== undefined) out.temperature = params.temperature;
  if (params.top_p !== undefined) out.top_p = params.top_p;
  const limit = params.max_completion_tokens ?? params.max_tokens;
  if (limit !== undefined) out[api === 'messages' ? 'max_tokens' : 'max_output_tokens'] = limit;
  if (api === 'responses' && params.reasoning_effort !== undefined) {
    const reasoning = body.reasoning && typeof body.reasoning === 'object' ? body.reasoning : {};
    out.reasoning = { ...reasoning, effort: params.reasoning_effort };
  }
  return out;
}
