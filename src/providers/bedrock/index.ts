import type { UpstreamClient } from '../../upstream/http-client.ts';
import { createHttpProvider } from '../http-provider.ts';
import type { NativeProviderDefinition } from '../native-provider-definition.ts';
import type { ProviderAdapter } from '../types.ts';
import { type BedrockTarget, buildBedrockRequest } from './build-request.ts';
import { decodeBedrockResponse } from './decode-response.ts';
import { mapBedrockError } from './map-error.ts';
import { type BedrockAuth, createRequestSigner } from './sign-request.ts';
import { buildBedrockEmbeddings, decodeBedrockEmbeddings } from './embed.ts';
import { callEmbeddingsUpstream } from '../embed-call.ts';

const NAME = 'bedrock';
/** Titan's InvokeModel calls of one request in flight at once (one per input). */
const TITAN_CONCURRENCY = 8;

export interface BedrockSettings extends BedrockTarget {
  auth: BedrockAuth;
  models: string[];
  /** The signing clock (tests pin it). */
  now?: () => Date;
}

/** AWS Bedrock through the Converse API: one request shape for every model Bedrock serves. */
export function createBedrockProvider(settings: BedrockSettings, client: UpstreamClient): ProviderAdapter {
  const sign = createRequestSigner(settings.auth, settings.now);
  const adapter = createHttpProvider(
    {
      name: NAME,
      models: settings.models,
      buildRequest: (request, model, stream) => sign(buildBedrockRequest(request, model, stream, settings)),
      // The eventstream codec (@smithy) is loaded by the first stream: see sign-request.ts.
      createStreamDecoder: async () => (await import('./decode-stream.ts')).createBedrockStreamDecoder(NAME),
      decodeResponse: (body) => decodeBedrockResponse(body, NAME),
      mapError: mapBedrockError,
    },
    client,
  );
  return {
    ...adapter,
    // Titan and Cohere embedding models through InvokeModel (Titan: one call per input, a few at a time).
    async embed(request, model, ctx) {
      const calls = buildBedrockEmbeddings(request, model, settings);
      const answers = [];
      for (let at = 0; at < calls.length; at += TITAN_CONCURRENCY) {
        const wave = calls.slice(at, at + TITAN_CONCURRENCY);
        answers.push(
          ...(await Promise.all(
            wave.map(async (call) => callEmbeddingsUpstream(NAME, client, await sign(call), ctx, mapBedrockError)),
          )),
        );
      }
      return decodeBedrockEmbeddings(model, answers, request.input.length);
    },
  };
}

/**
 * Enabled by a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK or `api_key`, which wins, as in the AWS
 * SDKs) or by IAM keys in the environment. The region comes from the config, else AWS_REGION /
 * AWS_DEFAULT_REGION, else us-east-1.
 */
export const bedrockProvider: NativeProviderDefinition = {
  name: NAME,
  enableHint: 'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_BEARER_TOKEN_BEDROCK)',
  secretEnv: ['AWS_BEARER_TOKEN_BEDROCK', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_ACCESS_KEY_ID'],
  create(env, fromFile, client) {
    const region = fromFile?.region || env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1';
    const token = fromFile?.api_key || env.AWS_BEARER_TOKEN_BEDROCK;
    let auth: BedrockAuth;
    if (token) auth = { kind: 'bearer', token };
    else if (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY) {
      auth = {
        kind: 'sigv4',
        region,
        credentials: {
          accessKeyId: env.AWS_ACCESS_KEY_ID,
          secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
          ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
        },
      };
    } else return undefined;
    return createBedrockProvider(
      {
        auth,
        endpoint: fromFile?.base_url || env.AWS_ENDPOINT_URL_BEDROCK_RUNTIME || `https://bedrock-runtime.${region}.amazonaws.com`,
        dropParams: fromFile?.drop_params ?? false,
        models: fromFile?.models ?? [],
      },
      client,
    );
  },
};
