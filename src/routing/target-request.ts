import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import type { Candidate } from './plan.ts';

/**
 * The request as one candidate receives it: the route's parameters for that target in place of
 * the client's. An output limit set by the route replaces whichever name the client used (the
 * limit is `max_completion_tokens ?? max_tokens`, so leaving the client's would win).
 */
export function requestFor(request: CanonicalRequest, candidate: Candidate): CanonicalRequest {
  const params = candidate.params;
  if (!params) return request;
  const out: CanonicalRequest = { ...request, ...params };
  const limit = params.max_completion_tokens ?? params.max_tokens;
  if (limit !== undefined) {
    if (request.max_completion_tokens != null || params.max_completion_tokens !== undefined) out.max_completion_tokens = limit;
    if (request.max_tokens != null || params.max_tokens !== undefined) out.max_tokens = limit;
  }
  return out;
}
