import { ConfigError } from '../../config/config-error.ts';
import type { ProviderConfig } from '../../config/schema.ts';
import type { UpstreamClient, UpstreamRequest } from '../../upstream/http-client.ts';
import { createBatchApi } from '../batch-api.ts';
import { callEmbeddingsUpstream } from '../embed-call.ts';
import { createHttpProvider } from '../http-provider.ts';
import { createMediaApi } from '../media-api.ts';
import { realtimeUrl } from '../realtime-url.ts';
import type { NativeProviderDefinition } from '../native-provider-definition.ts';
import { chatCompletionsBody } from '../openai-compatible/build-request.ts';
import { decodeOpenAICompatibleResponse } from '../openai-compatible/decode-response.ts';
import { createOpenAICompatibleFrameDecoder } from '../openai-compatible/decode-stream.ts';
import { decodeOpenAICompatibleEmbeddings, embeddingsBody } from '../openai-compatible/embed.ts';
import { createResponsesRelay } from '../openai-compatible/relay-responses.ts';
import { createSseStreamDecoder } from '../sse-decoder.ts';
import type { MediaApi, ProviderAdapter } from '../types.ts';
import type { UpstreamHeaders } from '../upstream-headers.ts';
import { createEntraTokenSource, type EntraCredentials } from './entra-token.ts';
import { mapAzureError } from './map-error.ts';
import { type AzureApi, azureResourceUrl, azureUrl, DEFAULT_API_VERSION } from './url.ts';

export interface AzureSettings extends AzureApi {
  name: string;
  /** Sent as `api-key`; unused when `entra` is set. */
  apiKey: string | undefined;
  /** Microsoft Entra ID instead of a key: a bearer token of these client credentials. */
  entra: EntraCredentials | undefined;
  /** Model name -> deployment name; a model not listed is its own deployment's name. */
  deployments: Record<string, string>;
  headers: Record<string, string>;
  models: string[];
  /** Relay /v1/responses to Azure's Responses API (2025-03-01-preview on, or v1); else it is served through chat completions. */
  responsesApi: boolean;
}

/**
 * Azure OpenAI: OpenAI's Chat Completions, Responses, embeddings, images, audio, and Files and
 * Batch API at Azure's URLs (url.ts), a model named by its deployment, with a key or an Entra ID
 * token. The bodies, the stream and its content filter verdicts are OpenAI's (the
 * OpenAI-compatible adapter's code, reused).
 */
export function createAzureProvider(settings: AzureSettings, client: UpstreamClient): ProviderAdapter {
  const { name } = settings;
  const token = settings.entra ? createEntraTokenSource(name, settings.entra, client) : undefined;
  const deployment = (model: string) => settings.deployments[model] ?? model;
  const mapError = (status: number, headers: Parameters<typeof mapAzureError>[2], text: string) =>
    mapAzureError(name, status, headers, text);
  // The config's headers and the key, made once; with Entra ID, the token of the moment on each call.
  const keyed = settings.apiKey ? { ...settings.headers, 'api-key': settings.apiKey } : settings.headers;
  const upstreamHeaders: UpstreamHeaders = token
    ? async () => ({ ...settings.headers, authorization: `Bearer ${await token()}` })
    : () => keyed;

  /** A call of `path`; `perDeployment` false for an operation of the resource (Responses). */
  async function place(
    path: string,
    body: Record<string, unknown>,
    stream: boolean,
    perDeployment: boolean,
  ): Promise<UpstreamRequest> {
    const target = deployment(String(body.model));
    return {
      url: azureUrl(settings, path, perDeployment ? target : undefined),
      headers: {
        'content-type': 'application/json',
        accept: stream ? 'text/event-stream' : 'application/json',
        ...(await upstreamHeaders()),
      },
      body: JSON.stringify({ ...body, model: target }),
    };
  }

  const decodeOptions = { provider: name, splitThinkTags: false };
  const adapter = createHttpProvider(
    {
      name,
      models: [...new Set([...settings.models, ...Object.keys(settings.deployments)])],
      buildRequest: (request, model, stream) =>
        place('chat/completions', chatCompletionsBody(request, model, stream, true), stream, true),
      createStreamDecoder: () => createSseStreamDecoder(name, createOpenAICompatibleFrameDecoder(decodeOptions)),
      decodeResponse: (body) => decodeOpenAICompatibleResponse(body, decodeOptions),
      mapError,
    },
    client,
  );
  // Images and audio at the model's deployment (its name the body's model too, as on the v1 API).
  const deploymentMedia = createMediaApi(name, client, {
    urlFor: (path, target) => azureUrl(settings, path, target),
    headers: upstreamHeaders,
    mapError,
  });
  const media: MediaApi = { send: (call, model, ctx) => deploymentMedia.send(call, deployment(model), ctx) };
  // Files and batches are the resource's (`{endpoint}/openai/files?api-version=…`); a batch's
  // JSONL names its deployments itself, and goes as the client wrote it.
  const batches = createBatchApi(
    {
      provider: name,
      kind: 'openai',
      url: (path, search) => azureResourceUrl(settings, path, search),
      headers: upstreamHeaders,
      mapError,
    },
    client,
  );
  // The Realtime API through the v1 API (`{endpoint}/openai/v1/realtime?model={deployment}`), whatever
  // api-version the other calls use: the deployments form's Realtime URL is a preview's.
  const realtime: ProviderAdapter['realtime'] = {
    connection: async (model) => ({
      url: realtimeUrl(`${settings.endpoint.replace(/\/+$/, '')}/openai/v1`, deployment(model)),
      headers: await upstreamHeaders(),
    }),
  };
  return {
    ...adapter,
    media,
    batches,
    realtime,
    ...(settings.responsesApi && {
      responses: createResponsesRelay(name, (body, stream) => place('responses', body, stream, false), client, mapError),
    }),
    async embed(request, model, ctx) {
      const upstream = await place('embeddings', embeddingsBody(request, model), false, true);
      const { json } = await callEmbeddingsUpstream(name, client, upstream, ctx, mapError);
      return decodeOpenAICompatibleEmbeddings(name, json, request.input.length);
    },
  };
}

/** The Entra credentials of an entry (or the environment): all three, none, or a config error naming what is missing. */
function entraCredentials(name: string, env: NodeJS.ProcessEnv, entry: ProviderConfig | undefined): EntraCredentials | undefined {
  const tenantId = entry?.tenant_id || env.AZURE_TENANT_ID;
  const clientId = entry?.client_id || env.AZURE_CLIENT_ID;
  const clientSecret = entry?.client_secret || env.AZURE_CLIENT_SECRET;
  if (!tenantId && !clientId && !clientSecret) return undefined;
  if (!tenantId || !clientId || !clientSecret) {
    const missing = [!tenantId && 'tenant_id', !clientId && 'client_id', !clientSecret && 'client_secret'].filter(Boolean);
    throw new ConfigError(
      `providers.${name}: Entra ID needs tenant_id, client_id and client_secret; ${missing.join(', ')} missing.`,
    );
  }
  return { tenantId, clientId, clientSecret, ...(entry?.token_url && { tokenUrl: entry.token_url }) };
}

/** An entry's settings, or the environment's; undefined when neither enables the provider. */
function azureSettings(name: string, env: NodeJS.ProcessEnv, fromFile: ProviderConfig | undefined): AzureSettings | undefined {
  const endpoint = fromFile?.base_url || env.AZURE_OPENAI_ENDPOINT;
  const apiKey = fromFile?.api_key || env.AZURE_OPENAI_API_KEY || undefined;
  const entra = entraCredentials(name, env, fromFile);
  if (!fromFile && !(endpoint && (apiKey || entra))) return undefined;
  if (!endpoint) {
    throw new ConfigError(
      `providers.${name}: base_url (the resource's endpoint, https://{resource}.openai.azure.com) or AZURE_OPENAI_ENDPOINT is needed.`,
    );
  }
  const apiVersion = fromFile?.api_version || env.AZURE_OPENAI_API_VERSION || DEFAULT_API_VERSION;
  return { name, endpoint, apiVersion, apiKey, entra, ...entryLists(fromFile) };
}

function entryLists(
  fromFile: ProviderConfig | undefined,
): Pick<AzureSettings, 'deployments' | 'headers' | 'models' | 'responsesApi'> {
  return {
    deployments: fromFile?.deployments ?? {},
    headers: fromFile?.headers ?? {},
    models: fromFile?.models ?? [],
    responsesApi: fromFile?.responses_api === true,
  };
}

/**
 * Enabled by AZURE_OPENAI_ENDPOINT with AZURE_OPENAI_API_KEY (or AZURE_TENANT_ID, AZURE_CLIENT_ID
 * and AZURE_CLIENT_SECRET for Entra ID), or by a config entry (`providers.azure`, or any name with
 * `type: azure`), whose fields win.
 */
export const azureProvider: NativeProviderDefinition = {
  name: 'azure',
  enableHint: 'AZURE_OPENAI_ENDPOINT and AZURE_OPENAI_API_KEY',
  secretEnv: ['AZURE_OPENAI_API_KEY', 'AZURE_CLIENT_SECRET'],
  create(env, fromFile, client, name = 'azure') {
    const settings = azureSettings(name, env, fromFile);
    return settings && createAzureProvider(settings, client);
  },
};
