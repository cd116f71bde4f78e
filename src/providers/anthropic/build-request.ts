import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import type { UpstreamRequest } from '../../upstream/http-client.ts';
import { convertMessages } from './convert-messages.ts';
import { convertTools } from './convert-tools.ts';
import { anthropicResponseFormat } from './response-format.ts';
import { planTokens } from './thinking.ts';
import { type Unsupported, unsupportedParams } from './unsupported.ts';

export interface AnthropicTarget {
  baseUrl: string;
  apiKey: string | undefined;
  /** Extra headers from the config (e.g. `anthropic-beta`). */
  headers: Record<string, string>;
  /** Leave out what Anthropic cannot honour instead of answering 400. */
  dropParams: boolean;
}

/** The Messages API version this adapter speaks (request and stream formats). */
export const ANTHROPIC_VERSION = '2023-06-01';

/** CanonicalRequest -> `POST {base}/v1/messages`. Throws a 400 GatewayError for what cannot be sent. */
export function buildAnthropicRequest(
  request: CanonicalRequest,
  model: string,
  stream: boolean,
  target: AnthropicTarget,
): UpstreamRequest {
  const body = anthropicRequestBody(request, model, stream, target.dropParams);
  const headers: Record<string, string> = {
    ...messagesHeaders(stream),
    'anthropic-version': ANTHROPIC_VERSION,
    ...target.headers,
  };
  if (target.apiKey) headers['x-api-key'] = target.apiKey;
  return { url: `${target.baseUrl.replace(/\/+$/, '')}/v1/messages`, headers, body: JSON.stringify(body) };
}

export function messagesHeaders(stream: boolean): Record<string, string> {
  return { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' };
}

/**
 * The Messages body (the model in it), which Anthropic's API and the platforms that host Claude
 * (Vertex AI) take alike. Throws a 400 GatewayError for what cannot be sent (unless `dropParams`).
 */
export function anthropicRequestBody(
  request: CanonicalRequest,
  model: string,
  stream: boolean,
  dropParams: boolean,
): Record<string, unknown> {
  const unsupported = unsupportedParams(dropParams);
  rejectUnsupported(request, unsupported);
  const { system, messages } = convertMessages(request.messages, unsupported);
  const tokens = planTokens(request, unsupported);
  const thinking = tokens.budgetTokens !== undefined;

  const body: Record<string, unknown> = { model, messages, max_tokens: tokens.maxTokens };
  if (system.length > 0) body.system = system;
  if (thinking) body.thinking = { type: 'enabled', budget_tokens: tokens.budgetTokens };
  Object.assign(body, sampling(request, thinking, unsupported));
  if (request.stop != null) body.stop_sequences = typeof request.stop === 'string' ? [request.stop] : request.stop;
  const format = anthropicResponseFormat(request, model, thinking, unsupported);
  if (format.output_config) body.output_config = format.output_config;
  Object.assign(body, convertTools(request, model, thinking, unsupported, format.answerTool));
  // OpenAI's safety_identifier (not modelled, so in `extra`) names the end user for abuse
  // detection, which is what Anthropic's user_id is for.
  const safety = request.extra?.safety_identifier;
  const userId = request.user ?? request.metadata?.user_id ?? (typeof safety === 'string' ? safety : undefined);
  if (userId) body.metadata = { user_id: userId };
  const tier = serviceTier(request.service_tier, unsupported);
  if (tier) body.service_tier = tier;
  if (stream) body.stream = true;
  return body;
}

/** Parameters the Messages API has no equivalent for, when they would change the answer. */
function rejectUnsupported(request: CanonicalRequest, unsupported: Unsupported): void {
  const no = (param: string, what: string) => unsupported(param, `anthropic does not support ${what}.`);
  if (request.n != null && request.n > 1) no('n', 'several choices (n > 1)');
  if (request.presence_penalty) no('presence_penalty', 'presence_penalty');
  if (request.frequency_penalty) no('frequency_penalty', 'frequency_penalty');
  if (request.logit_bias && Object.keys(request.logit_bias).length > 0) no('logit_bias', 'logit_bias');
  if (request.logprobs) no('logprobs', 'logprobs');
  if (request.seed != null) no('seed', 'seed');
  const metadataKeys = Object.keys(request.metadata ?? {}).filter((k) => k !== 'user_id');
  if (metadataKeys.length > 0) no(`metadata.${metadataKeys[0]}`, 'metadata other than user_id (send the end user as `user`)');
}

/**
 * Anthropic's temperature is 0..1 (OpenAI's 0..2). Extended thinking allows neither temperature
 * nor top_k changes, and top_p only from 0.95 to 1 ("Extended thinking" > feature compatibility).
 * `top_k` is not OpenAI's but Anthropic's own, so it is honoured when a client sends it.
 */
function sampling(request: CanonicalRequest, thinking: boolean, unsupported: Unsupported): Record<string, number> {
  const out: Record<string, number> = {};
  const { temperature, top_p: topP } = request;
  const topK = request.extra?.top_k;
  if (temperature != null) {
    if (thinking) {
      if (temperature !== 1)
        unsupported('temperature', 'anthropic does not allow setting temperature while thinking (reasoning_effort).');
    } else if (temperature > 1) unsupported('temperature', 'anthropic accepts a temperature from 0 to 1.');
    else out.temperature = temperature;
  }
  if (topP != null) {
    if (thinking && topP < 0.95)
      unsupported('top_p', 'anthropic accepts top_p from 0.95 to 1 while thinking (reasoning_effort).');
    else out.top_p = topP;
  }
  if (typeof topK === 'number') {
    if (thinking) unsupported('top_k', 'anthropic does not allow top_k while thinking (reasoning_effort).');
    else out.top_k = topK;
  }
  return out;
}

/** OpenAI `auto` lets Anthropic use priority capacity; `default` is its standard capacity only. */
function serviceTier(tier: string | null | undefined, unsupported: Unsupported): string | undefined {
  if (tier == null) return undefined;
  if (tier === 'auto') return 'auto';
  if (tier === 'default') return 'standard_only';
  unsupported('service_tier', `anthropic has no '${tier}' service tier (use auto or default).`);
  return undefined;
}
