import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import type { UpstreamRequest } from '../../upstream/http-client.ts';
import { functionTools } from '../function-tools.ts';
import { checkModelId, modelIdRules } from '../model-id.ts';
import { convertMessages } from './convert-messages.ts';
import { type ParamPolicy, paramPolicy } from './params.ts';
import { thinkingConfig } from './thinking-config.ts';

export interface GoogleTarget {
  name: string;
  baseUrl: string;
  apiKey: string | undefined;
  /** Drop parameters Gemini cannot honour instead of answering 400. */
  dropParams: boolean;
}

/** OpenAI parameters with no Gemini counterpart that would change the answer if ignored. */
const NO_COUNTERPART: Record<string, string> = {
  logit_bias: 'Gemini has no token bias',
  audio: 'Gemini chat answers are text',
  prediction: 'Gemini has no predicted outputs',
  web_search_options: 'use a Gemini grounding tool through the native API instead',
};

/**
 * CanonicalRequest -> `POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse` (or
 * `:generateContent`). The key travels in `x-goog-api-key`, never in the URL, which gets logged.
 * `user` and `metadata` only label the request for OpenAI's own records: nothing to map, and
 * nothing in the answer changes without them, so they are not sent.
 */
export function buildGoogleRequest(
  request: CanonicalRequest,
  model: string,
  stream: boolean,
  target: GoogleTarget,
): UpstreamRequest {
  const body = geminiRequestBody(request, model, target);
  const base = target.baseUrl.replace(/\/+$/, '');
  const root = /\/v1(alpha|beta)?$/.test(base) ? base : `${base}/v1beta`;
  // A plain model id names `models/{id}`; `models/…` and `tunedModels/…` are used as they are.
  // The id is checked (model-id.ts) and encoded: it must stay one segment of the URL path.
  const [collection, id] = checkModelId(target.name, model, modelIdRules.google).split('/', 2);
  const resource = id === undefined ? `models/${encodeURIComponent(collection)}` : `${collection}/${encodeURIComponent(id)}`;
  const headers = geminiHeaders(stream);
  if (target.apiKey) headers['x-goog-api-key'] = target.apiKey;
  return { url: `${root}/${resource}:${geminiMethod(stream)}`, headers, body: JSON.stringify(body) };
}

/** The method of a (streamed) generation: Gemini's API and Vertex AI's name them alike. */
export function geminiMethod(stream: boolean): string {
  return stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
}

export function geminiHeaders(stream: boolean): Record<string, string> {
  return { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' };
}

/**
 * The GenerateContent body, which Gemini's API and Vertex AI take alike. Throws a 400 for what
 * Gemini cannot honour (unless `dropParams`).
 */
export function geminiRequestBody(
  request: CanonicalRequest,
  model: string,
  target: Pick<GoogleTarget, 'name' | 'dropParams'>,
): Record<string, unknown> {
  const policy = paramPolicy(target.name, target.dropParams);
  // logit_bias is a canonical field; the others are not modelled and ride in `extra`.
  const loose: Record<string, unknown> = { ...request.extra, ...request };
  for (const [param, why] of Object.entries(NO_COUNTERPART)) {
    if (loose[param] != null) policy.unsupported(param, why);
  }
  const modalities = loose.modalities;
  if (Array.isArray(modalities) && modalities.some((m) => m !== 'text')) {
    policy.unsupported('modalities', 'Gemini chat answers are text');
  }
  if (request.service_tier && request.service_tier !== 'auto' && request.service_tier !== 'default') {
    policy.unsupported('service_tier', 'Gemini has no service tiers to choose from here');
  }

  const { systemInstruction, contents } = convertMessages(request.messages, model, policy);
  const body: Record<string, unknown> = { contents };
  if (systemInstruction) body.systemInstruction = systemInstruction;
  const tools = toolsOf(request, policy);
  if (tools) Object.assign(body, tools);
  body.generationConfig = generationConfig(request, model);
  return body;
}

/**
 * Tools go as `functionDeclarations` with the client's JSON Schema untouched in
 * `parametersJsonSchema` (Gemini's `parameters` takes only an OpenAPI subset). `strict` has no
 * counterpart and is not needed: the declared schema is what Gemini follows.
 */
function toolsOf(request: CanonicalRequest, policy: ParamPolicy): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  const tools = functionTools(request, 'google', policy.unsupported);
  if (tools.length > 0) {
    out.tools = [
      {
        functionDeclarations: tools.map(({ function: f }) => ({
          name: f.name,
          ...(f.description !== undefined && { description: f.description }),
          ...(f.parameters !== undefined && { parametersJsonSchema: f.parameters }),
        })),
      },
    ];
    // Gemini decides alone how many calls a turn makes; it cannot be held to one.
    if (request.parallel_tool_calls === false) {
      policy.unsupported('parallel_tool_calls', 'Gemini cannot be limited to one call per turn');
    }
  }
  const choice = request.tool_choice;
  if (choice !== undefined) {
    const config =
      typeof choice === 'object'
        ? { mode: 'ANY', allowedFunctionNames: [choice.function.name] }
        : { mode: { auto: 'AUTO', none: 'NONE', required: 'ANY' }[choice] };
    out.toolConfig = { functionCallingConfig: config };
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

function generationConfig(request: CanonicalRequest, model: string): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (maxTokens != null) config.maxOutputTokens = maxTokens;
  if (request.temperature != null) config.temperature = request.temperature;
  if (request.top_p != null) config.topP = request.top_p;
  if (request.stop != null) config.stopSequences = typeof request.stop === 'string' ? [request.stop] : request.stop;
  if (request.n != null) config.candidateCount = request.n;
  if (request.seed != null) config.seed = request.seed;
  if (request.presence_penalty != null) config.presencePenalty = request.presence_penalty;
  if (request.frequency_penalty != null) config.frequencyPenalty = request.frequency_penalty;
  if (request.logprobs) {
    config.responseLogprobs = true;
    if (request.top_logprobs != null) config.logprobs = request.top_logprobs;
  }
  const format = request.response_format;
  if (format?.type === 'json_object') config.responseMimeType = 'application/json';
  else if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    if (format.json_schema.schema) config.responseJsonSchema = format.json_schema.schema;
  }
  const thinking = thinkingConfig(request.reasoning_effort, model);
  if (thinking) config.thinkingConfig = thinking;
  return config;
}
