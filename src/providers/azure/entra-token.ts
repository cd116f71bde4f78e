import { errors } from '../../errors/catalog.ts';
import { upstreamHttpError } from '../../errors/upstream-error.ts';
import type { UpstreamClient } from '../../upstream/http-client.ts';
import { readText } from '../http-provider.ts';

/** The scope of an Azure OpenAI (Cognitive Services) access token. */
export const COGNITIVE_SERVICES_SCOPE = 'https://cognitiveservices.azure.com/.default';

/** A Microsoft Entra ID service principal's client credentials. */
export interface EntraCredentials {
  tenantId: string;
  clientId: string;
  clientSecret: string;
  /** The token endpoint; Entra's own for the tenant when absent. */
  tokenUrl?: string;
}

/** A token is renewed this long before it expires (Entra's last an hour or more), so none expires mid-call. */
const REFRESH_MARGIN_MS = 5 * 60_000;
/** How long the token request itself may take. */
const TOKEN_TIMEOUT_MS = 30_000;

/** Entra's token endpoint of a tenant (OAuth 2.0 client credentials grant, v2.0). */
export function entraTokenUrl(tenantId: string): string {
  return `https://login.microsoftonline.com/${encodeURIComponent(tenantId)}/oauth2/v2.0/token`;
}

/**
 * The access token of a service principal for Azure OpenAI: asked for once, kept, and asked for
 * again shortly before it expires; calls that need one while it is being asked for wait for the
 * same request. A refused request is a 502 saying sluice's credentials were refused (never the
 * secret, nor a token: neither is logged or put in an error).
 */
export function createEntraTokenSource(
  provider: string,
  credentials: EntraCredentials,
  client: UpstreamClient,
  now: () => number = Date.now,
): () => Promise<string> {
  let token: { value: string; renewAt: number } | undefined;
  let pending: Promise<string> | undefined;

  async function fetchToken(): Promise<string> {
    const signal = AbortSignal.timeout(TOKEN_TIMEOUT_MS);
    const body = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: credentials.clientId,
      client_secret: credentials.clientSecret,
      scope: COGNITIVE_SERVICES_SCOPE,
    }).toString();
    const asked = now();
    const res = await client.send(
      provider,
      {
        url: credentials.tokenUrl ?? entraTokenUrl(credentials.tenantId),
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body,
      },
      signal,
    );
    const text = await readText(res.body, provider, signal);
    let json: { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } = {};
    try {
      json = JSON.parse(text) as typeof json;
    } catch {
      // described below
    }
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const why = typeof json.error_description === 'string' ? json.error_description : text.slice(0, 300);
      // Any refusal of the credentials is sluice's own account's (401: a gateway fault); a 5xx stays one.
      const status = res.statusCode >= 500 ? res.statusCode : 401;
      throw upstreamHttpError({
        provider,
        status,
        httpStatus: res.statusCode,
        message: `the Entra ID token request failed: ${why}`,
        upstreamCode: typeof json.error === 'string' ? json.error : undefined,
      });
    }
    const expiresIn = Number(json.expires_in);
    if (typeof json.access_token !== 'string' || !json.access_token || !Number.isFinite(expiresIn)) {
      throw errors.malformed(provider, 'the Entra ID token response has no access_token and expires_in');
    }
    // A short-lived token is renewed at half its life rather than never being used.
    const margin = Math.min(REFRESH_MARGIN_MS, (expiresIn * 1000) / 2);
    token = { value: json.access_token, renewAt: asked + expiresIn * 1000 - margin };
    return json.access_token;
  }

  return () => {
    if (token && now() < token.renewAt) return Promise.resolve(token.value);
    pending ??= fetchToken().finally(() => {
      pending = undefined;
    });
    return pending;
  };
}
