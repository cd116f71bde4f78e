import type { McpServerConfig } from '../config/mcp-schema.ts';

type OAuthSettings = NonNullable<McpServerConfig['oauth']>;

/** A token is fetched again this long before it expires, so that no request carries one that lapses on the way. */
const EARLY_MS = 30_000;
/** A token endpoint that names no lifetime: asked again after this long. */
const DEFAULT_LIFETIME_S = 300;

/**
 * An access token from an OAuth token endpoint by the client credentials grant (RFC 6749 4.4),
 * cached until shortly before it expires; concurrent askers share one fetch. `forget()` drops it
 * (the upstream answered 401: the token was revoked early).
 */
export class ClientCredentials {
  private token: { value: string; expiresAt: number } | undefined;
  private pending: Promise<string> | undefined;
  private readonly settings: OAuthSettings;
  private readonly fetch: typeof globalThis.fetch;
  private readonly now: () => number;

  constructor(settings: OAuthSettings, fetchImpl: typeof globalThis.fetch = globalThis.fetch, now: () => number = Date.now) {
    this.settings = settings;
    this.fetch = fetchImpl;
    this.now = now;
  }

  get(): Promise<string> {
    if (this.token && this.token.expiresAt - EARLY_MS > this.now()) return Promise.resolve(this.token.value);
    this.pending ??= this.request().finally(() => (this.pending = undefined));
    return this.pending;
  }

  forget(): void {
    this.token = undefined;
  }

  private async request(): Promise<string> {
    const { token_url, client_id, client_secret, scope, audience } = this.settings;
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id, client_secret });
    if (scope) form.set('scope', scope);
    if (audience) form.set('audience', audience);
    const res = await this.fetch(token_url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form,
      signal: AbortSignal.timeout(10_000),
    });
    if (!res.ok) throw new Error(`the token endpoint answered ${res.status}`);
    const body = (await res.json()) as { access_token?: unknown; expires_in?: unknown };
    if (typeof body.access_token !== 'string' || body.access_token === '')
      throw new Error('the token endpoint sent no access_token');
    const lifetime = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : DEFAULT_LIFETIME_S;
    this.token = { value: body.access_token, expiresAt: this.now() + lifetime * 1000 };
    return body.access_token;
  }
}
