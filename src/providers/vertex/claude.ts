import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import type { UpstreamRequest } from '../../upstream/http-client.ts';
import { anthropicRequestBody, messagesHeaders } from '../anthropic/build-request.ts';
import { type MessagesEndpoint, withBeta } from '../anthropic/relay-messages.ts';
import type { MapError } from '../embed-call.ts';
import { type VertexLocation, vertexModelUrl } from './location.ts';

/** The Messages API version Claude on Vertex AI speaks: it goes in the body, not in a header. */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** What a call to Claude on Vertex needs: where, its extra headers, and the access token of the moment. */
export interface VertexClaudeTarget extends VertexLocation {
  headers: Record<string, string>;
  accessToken: () => Promise<string>;
}

/**
 * A Messages body (the model in it) as Vertex AI takes it: the model goes in the URL
 * (`…/publishers/anthropic/models/{model}:streamRawPredict`, or `:rawPredict` unstreamed), the
 * version in the body. Its token count is `count-tokens:rawPredict`, the model in the body there.
 */
export async function vertexClaudeRequest(
  target: VertexClaudeTarget,
  body: Record<string, unknown>,
  stream: boolean,
  count = false,
  beta?: string,
): Promise<UpstreamRequest> {
  const headers = withBeta({ ...messagesHeaders(stream), ...target.headers }, beta);
  headers.authorization = `Bearer ${await target.accessToken()}`;
  if (count)
    return { url: vertexModelUrl(target, 'anthropic', 'count-tokens', 'rawPredict'), headers, body: JSON.stringify(body) };
  const { model, ...rest } = body;
  return {
    url: vertexModelUrl(target, 'anthropic', String(model), stream ? 'streamRawPredict' : 'rawPredict'),
    headers,
    body: JSON.stringify({ ...rest, anthropic_version: VERTEX_ANTHROPIC_VERSION }),
  };
}

/** A canonical request to Claude on Vertex: the Anthropic adapter's body, Vertex's placing. */
export function buildVertexClaudeRequest(
  request: CanonicalRequest,
  model: string,
  stream: boolean,
  target: VertexClaudeTarget,
  dropParams: boolean,
): Promise<UpstreamRequest> {
  return vertexClaudeRequest(target, anthropicRequestBody(request, model, stream, dropParams), stream);
}

/** POST /v1/messages relayed to Claude on Vertex AI (relay-messages.ts does the rest). */
export function vertexMessagesEndpoint(provider: string, target: VertexClaudeTarget, mapError: MapError): MessagesEndpoint {
  return {
    provider,
    mapError,
    place: (call, body, stream, beta) => vertexClaudeRequest(target, body, stream, call === 'count_tokens', beta),
  };
}
