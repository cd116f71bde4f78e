import type { UpstreamClient } from '../../upstream/http-client.ts';
import { createHttpProvider } from '../http-provider.ts';
import { createSseStreamDecoder } from '../sse-decoder.ts';
import type { ProviderAdapter } from '../types.ts';
import { buildOpenAICompatibleRequest, type OpenAICompatibleTarget } from './build-request.ts';
import { decodeOpenAICompatibleResponse } from './decode-response.ts';
import { createOpenAICompatibleFrameDecoder } from './decode-stream.ts';
import { mapOpenAICompatibleError } from './map-error.ts';
import { createModelList, type ModelListTimings } from './list-models.ts';
import { createResponsesRelay, responsesAt } from './relay-responses.ts';
import { buildOpenAICompatibleEmbeddings, decodeOpenAICompatibleEmbeddings } from './embed.ts';
import { callEmbeddingsUpstream } from '../embed-call.ts';
import { createBatchApi, joinUrl } from '../batch-api.ts';
import { createMediaApi } from '../media-api.ts';
import { realtimeUrl } from '../realtime-url.ts';

export interface OpenAICompatibleSettings extends OpenAICompatibleTarget {
  name: string;
  splitThinkTags: boolean;
  models: string[];
  /** Relay /v1/responses to the upstream's own Responses API. */
  responsesApi: boolean;
}

/** The adapter, plus the models the upstream lists itself (GET /v1/models asks it, cached). */
export interface OpenAICompatibleAdapter extends ProviderAdapter {
  readonly listUpstreamModels: () => Promise<string[]>;
}

/** One adapter for every server that speaks the Chat Completions protocol. */
export function createOpenAICompatibleProvider(
  settings: OpenAICompatibleSettings,
  client: UpstreamClient,
  modelListTimings?: ModelListTimings,
): OpenAICompatibleAdapter {
  const decodeOptions = { provider: settings.name, splitThinkTags: settings.splitThinkTags };
  const adapter = createHttpProvider(
    {
      name: settings.name,
      models: settings.models,
      buildRequest: (request, model, stream) => buildOpenAICompatibleRequest(request, model, stream, settings),
      createStreamDecoder: () => createSseStreamDecoder(settings.name, createOpenAICompatibleFrameDecoder(decodeOptions)),
      decodeResponse: (body) => decodeOpenAICompatibleResponse(body, decodeOptions),
      mapError: (status, headers, text) => mapOpenAICompatibleError(settings.name, status, headers, text),
    },
    client,
  );
  const listUpstreamModels = createModelList(settings, client, modelListTimings);
  const responses = settings.responsesApi ? createResponsesRelay(settings.name, responsesAt(settings), client) : undefined;
  // POST /v1/embeddings goes to the upstream's own /embeddings.
  const embed: OpenAICompatibleAdapter['embed'] = async (request, model, ctx) => {
    const { json } = await callEmbeddingsUpstream(
      settings.name,
      client,
      buildOpenAICompatibleEmbeddings(request, model, settings),
      ctx,
      (status, headers, text) => mapOpenAICompatibleError(settings.name, status, headers, text),
    );
    return decodeOpenAICompatibleEmbeddings(settings.name, json, request.input.length);
  };
  // The key and the config's headers, made once: every batch and media call sends the same.
  const upstreamHeaders = settings.apiKey
    ? { ...settings.headers, authorization: `Bearer ${settings.apiKey}` }
    : settings.headers;
  // /v1/files and /v1/batches go to the upstream's own, under its base URL (`…/v1/files`).
  const batches = createBatchApi(
    {
      provider: settings.name,
      kind: 'openai',
      url: (path, search) => joinUrl(settings.baseUrl, path, search),
      headers: () => upstreamHeaders,
      mapError: (status, headers, text) => mapOpenAICompatibleError(settings.name, status, headers, text),
    },
    client,
  );
  // Images and audio go to the upstream's own endpoints under its base URL (/images/generations, ...).
  const media = createMediaApi(settings.name, client, {
    urlFor: (path) => `${settings.baseUrl.replace(/\/+$/, '')}/${path}`,
    headers: () => upstreamHeaders,
    mapError: (status, headers, text) => mapOpenAICompatibleError(settings.name, status, headers, text),
  });
  // GET /v1/realtime opens the upstream's own WebSocket under its base URL, with the provider's key.
  const realtime: OpenAICompatibleAdapter['realtime'] = {
    connection: async (model) => ({ url: realtimeUrl(settings.baseUrl, model), headers: upstreamHeaders }),
  };
  const own = { embed, media, realtime, listUpstreamModels, batches };
  return responses ? { ...adapter, responses, ...own } : { ...adapter, ...own };
}
