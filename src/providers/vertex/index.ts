import { readFileSync } from 'node:fs';
import { ConfigError } from '../../config/config-error.ts';
import type { ProviderConfig } from '../../config/schema.ts';
import type { UpstreamClient } from '../../upstream/http-client.ts';
import { decodeAnthropicResponse } from '../anthropic/decode-response.ts';
import { createAnthropicStreamDecoder } from '../anthropic/decode-stream.ts';
import { createMessagesRelay } from '../anthropic/relay-messages.ts';
import { geminiHeaders, geminiMethod, geminiRequestBody } from '../google/build-request.ts';
import { decodeGeminiResponse } from '../google/decode-response.ts';
import { createGeminiStreamDecoder } from '../google/decode-stream.ts';
import { createHttpProvider } from '../http-provider.ts';
import type { NativeProviderDefinition } from '../native-provider-definition.ts';
import type { ProviderAdapter } from '../types.ts';
import { createVertexTokenSource, type ServiceAccountKey, type VertexCredentials } from './access-token.ts';
import { buildVertexClaudeRequest, vertexMessagesEndpoint } from './claude.ts';
import { publisherOf, type VertexLocation, vertexModelUrl } from './location.ts';
import { mapVertexError } from './map-error.ts';

export interface VertexSettings extends VertexLocation {
  name: string;
  credentials: VertexCredentials;
  headers: Record<string, string>;
  dropParams: boolean;
  models: string[];
}

/**
 * Vertex AI: Gemini (`publishers/google`, the Gemini adapter's body and decoders) and Claude
 * (`publishers/anthropic`, the Anthropic adapter's, and its /v1/messages relay), with an access
 * token from google-auth-library. A `claude-…` model is Claude; any other is Gemini.
 */
export function createVertexProvider(settings: VertexSettings, client: UpstreamClient): ProviderAdapter {
  const { name } = settings;
  const accessToken = createVertexTokenSource(name, settings.credentials);
  const mapError = (status: number, headers: Parameters<typeof mapVertexError>[2], text: string) =>
    mapVertexError(name, status, headers, text);
  const claudeTarget = { ...settings, accessToken };

  const decodeOptions = { provider: name };
  const gemini = createHttpProvider(
    {
      name,
      async buildRequest(request, model, stream) {
        const body = geminiRequestBody(request, model, settings);
        const headers = { ...geminiHeaders(stream), ...settings.headers, authorization: `Bearer ${await accessToken()}` };
        return { url: vertexModelUrl(settings, 'google', model, geminiMethod(stream)), headers, body: JSON.stringify(body) };
      },
      createStreamDecoder: () => createGeminiStreamDecoder(decodeOptions),
      decodeResponse: (body) => decodeGeminiResponse(body, decodeOptions),
      mapError,
    },
    client,
  );
  const claude = createHttpProvider(
    {
      name,
      buildRequest: (request, model, stream) =>
        buildVertexClaudeRequest(request, model, stream, claudeTarget, settings.dropParams),
      createStreamDecoder: createAnthropicStreamDecoder,
      decodeResponse: decodeAnthropicResponse,
      mapError,
    },
    client,
  );
  const of = (model: string) => (publisherOf(model) === 'anthropic' ? claude : gemini);
  return {
    name,
    listModels: () => settings.models,
    stream: (request, model, ctx) => of(model).stream(request, model, ctx),
    complete: (request, model, ctx) => of(model).complete(request, model, ctx),
    messages: createMessagesRelay(vertexMessagesEndpoint(name, claudeTarget, mapError), client),
    relaysMessages: (model) => publisherOf(model) === 'anthropic',
  };
}

/** The service-account key a file holds, or a config error naming the file. */
function readKey(name: string, path: string): ServiceAccountKey {
  let key: Partial<ServiceAccountKey>;
  try {
    key = JSON.parse(readFileSync(path, 'utf8')) as Partial<ServiceAccountKey>;
  } catch (err) {
    throw new ConfigError(`providers.${name}: the credentials file ${path} cannot be read as JSON (${(err as Error).message}).`);
  }
  if (typeof key.client_email !== 'string' || typeof key.private_key !== 'string') {
    throw new ConfigError(`providers.${name}: ${path} is not a service-account key (it needs client_email and private_key).`);
  }
  return key as ServiceAccountKey;
}

/** A key file, else an access token from the environment, else (a config entry only) Application Default Credentials. */
function credentialsOf(
  name: string,
  env: NodeJS.ProcessEnv,
  fromFile: ProviderConfig | undefined,
): VertexCredentials | undefined {
  const keyFile = fromFile?.credentials_file || env.GOOGLE_APPLICATION_CREDENTIALS;
  if (keyFile) return { key: readKey(name, keyFile) };
  const accessToken = fromFile?.api_key || env.VERTEX_ACCESS_TOKEN;
  if (accessToken) return { accessToken };
  return fromFile ? { applicationDefault: true } : undefined;
}

function vertexSettings(name: string, env: NodeJS.ProcessEnv, fromFile: ProviderConfig | undefined): VertexSettings | undefined {
  const project = fromFile?.project || env.GOOGLE_CLOUD_PROJECT;
  if (!fromFile && !project) return undefined;
  const credentials = credentialsOf(name, env, fromFile);
  if (!credentials) return undefined;
  if (!project) throw new ConfigError(`providers.${name}: project (or GOOGLE_CLOUD_PROJECT) is needed.`);
  const location = fromFile?.region || env.GOOGLE_CLOUD_LOCATION || 'global';
  // The location becomes part of the endpoint's host name.
  if (!/^[a-z0-9-]+$/.test(location))
    throw new ConfigError(`providers.${name}: region '${location}' is not a Vertex AI location.`);
  return {
    name,
    project,
    location,
    ...(fromFile?.base_url && { baseUrl: fromFile.base_url }),
    credentials,
    headers: fromFile?.headers ?? {},
    dropParams: fromFile?.drop_params === true,
    models: fromFile?.models ?? [],
  };
}

/**
 * Enabled by GOOGLE_CLOUD_PROJECT with GOOGLE_APPLICATION_CREDENTIALS (a service-account key) or
 * VERTEX_ACCESS_TOKEN, or by a config entry (`providers.vertex`, or any name with `type: vertex`),
 * whose fields win; an entry without either uses Application Default Credentials.
 */
export const vertexProvider: NativeProviderDefinition = {
  name: 'vertex',
  enableHint: 'GOOGLE_CLOUD_PROJECT and GOOGLE_APPLICATION_CREDENTIALS',
  secretEnv: ['VERTEX_ACCESS_TOKEN'],
  create(env, fromFile, client, name = 'vertex') {
    const settings = vertexSettings(name, env, fromFile);
    return settings && createVertexProvider(settings, client);
  },
};
