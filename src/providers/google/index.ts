import type { UpstreamClient } from '../../upstream/http-client.ts';
import { createHttpProvider } from '../http-provider.ts';
import type { NativeProviderDefinition } from '../native-provider-definition.ts';
import type { ProviderAdapter } from '../types.ts';
import { buildGoogleRequest, type GoogleTarget } from './build-request.ts';
import { countGeminiTokens } from './count-tokens.ts';
import { decodeGeminiResponse } from './decode-response.ts';
import { createGeminiStreamDecoder } from './decode-stream.ts';
import { mapGoogleError } from './map-error.ts';
import { buildGeminiEmbeddings, decodeGeminiEmbeddings } from './embed.ts';
import { callEmbeddingsUpstream } from '../embed-call.ts';

export const GEMINI_DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com';

export interface GoogleSettings extends GoogleTarget {
  models: string[];
}

/** Gemini over the Generative Language API (`google/<model>`). */
export function createGoogleProvider(settings: GoogleSettings, client: UpstreamClient): ProviderAdapter {
  const decodeOptions = { provider: settings.name };
  const adapter = createHttpProvider(
    {
      name: settings.name,
      models: settings.models,
      buildRequest: (request, model, stream) => buildGoogleRequest(request, model, stream, settings),
      createStreamDecoder: () => createGeminiStreamDecoder(decodeOptions),
      decodeResponse: (body) => decodeGeminiResponse(body, decodeOptions),
      mapError: (status, headers, text) => mapGoogleError(settings.name, status, headers, text),
    },
    client,
  );
  // POST /v1/messages/count_tokens asks Gemini's own count (surfaces/messages/count-tokens.ts).
  return {
    ...adapter,
    countTokens: (request, model, ctx) => countGeminiTokens(request, model, ctx, settings, client),
    async embed(request, model, ctx) {
      const { json } = await callEmbeddingsUpstream(
        settings.name,
        client,
        buildGeminiEmbeddings(request, model, settings),
        ctx,
        (status, headers, text) => mapGoogleError(settings.name, status, headers, text),
      );
      return decodeGeminiEmbeddings(settings.name, json, request.input.length);
    },
  };
}

/**
 * Enabled by GEMINI_API_KEY (or GOOGLE_API_KEY, the name Google's SDKs also read) or by a
 * `providers.google` config entry; GEMINI_BASE_URL or `base_url` points it elsewhere.
 */
export const googleProvider: NativeProviderDefinition = {
  name: 'google',
  enableHint: 'GEMINI_API_KEY',
  secretEnv: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
  create(env, fromFile, client) {
    const apiKey = fromFile?.api_key || env.GEMINI_API_KEY || env.GOOGLE_API_KEY;
    if (!fromFile && !apiKey) return undefined;
    return createGoogleProvider(
      {
        name: 'google',
        baseUrl: fromFile?.base_url || env.GEMINI_BASE_URL || GEMINI_DEFAULT_BASE_URL,
        apiKey,
        dropParams: fromFile?.drop_params ?? false,
        models: fromFile?.models ?? [],
      },
      client,
    );
  },
};
