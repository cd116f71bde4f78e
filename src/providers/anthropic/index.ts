import type { ProviderConfig } from '../../config/schema.ts';
import type { UpstreamClient } from '../../upstream/http-client.ts';
import { createHttpProvider } from '../http-provider.ts';
import type { NativeProviderDefinition } from '../native-provider-definition.ts';
import type { ProviderAdapter } from '../types.ts';
import { type AnthropicTarget, buildAnthropicRequest } from './build-request.ts';
import { decodeAnthropicResponse } from './decode-response.ts';
import { createAnthropicStreamDecoder } from './decode-stream.ts';
import { mapAnthropicError, PROVIDER } from './map-error.ts';
import { anthropicEndpoint, createMessagesRelay } from './relay-messages.ts';
import { createBatchApi, joinUrl } from '../batch-api.ts';
import { ANTHROPIC_VERSION } from './build-request.ts';

export const DEFAULT_BASE_URL = 'https://api.anthropic.com';

export function createAnthropicProvider(target: AnthropicTarget, models: string[], client: UpstreamClient): ProviderAdapter {
  const adapter = createHttpProvider(
    {
      name: PROVIDER,
      models,
      buildRequest: (request, model, stream) => buildAnthropicRequest(request, model, stream, target),
      createStreamDecoder: createAnthropicStreamDecoder,
      decodeResponse: decodeAnthropicResponse,
      mapError: mapAnthropicError,
    },
    client,
  );
  // POST /v1/messages goes to Anthropic as the client sent it (surfaces/messages/operation.ts). Its stream
  // opens with message_start, which reports the input tokens (cache reads and writes included).
  // /v1/messages/batches goes to Anthropic's Message Batches (src/surfaces/batches).
  const batches = createBatchApi(
    {
      provider: PROVIDER,
      kind: 'anthropic',
      url: (path, search) => joinUrl(target.baseUrl, `/v1${path}`, search),
      headers: () => ({
        'anthropic-version': ANTHROPIC_VERSION,
        ...target.headers,
        ...(target.apiKey ? { 'x-api-key': target.apiKey } : {}),
      }),
      mapError: mapAnthropicError,
    },
    client,
  );
  return { ...adapter, reportsInputFirst: true, messages: createMessagesRelay(anthropicEndpoint(target), client), batches };
}

/** Enabled by ANTHROPIC_API_KEY or a `providers.anthropic` config entry (whose fields win). */
export const anthropicProvider: NativeProviderDefinition = {
  name: PROVIDER,
  enableHint: 'ANTHROPIC_API_KEY',
  secretEnv: ['ANTHROPIC_API_KEY'],
  create(env: NodeJS.ProcessEnv, fromFile: ProviderConfig | undefined, client: UpstreamClient) {
    const apiKey = fromFile?.api_key || env.ANTHROPIC_API_KEY || undefined;
    if (!fromFile && !apiKey) return undefined;
    return createAnthropicProvider(
      {
        baseUrl: fromFile?.base_url || env.ANTHROPIC_BASE_URL || DEFAULT_BASE_URL,
        apiKey,
        headers: fromFile?.headers ?? {},
        dropParams: fromFile?.drop_params === true,
      },
      fromFile?.models ?? [],
      client,
    );
  },
};
