import type * as oidc from 'openid-client';
import type { SsoConfig } from '../config/sso-schema.ts';
import { errors } from '../errors/catalog.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { Identity } from '../governance/users/users.ts';

/** What a sign-in started in a browser must find again at the callback (the pending-login cookie). */
export interface PendingLogin {
  state: string;
  nonce: string;
  verifier: string;
}

/** A sign-in the identity provider confirmed: who, their claims, and the ID token (for logout). */
export interface SignedIn {
  identity: Identity;
  claims: Record<string, unknown>;
  idToken: string;
}

/**
 * openid-client, loaded at the first sign-in: a gateway without auth.sso never pays for it
 * (~6 MiB of RSS, measured by importing it into an idle process).
 */
let library: Promise<typeof oidc> | undefined;
const openidClient = () => (library ??= import('openid-client'));

/** How long the identity provider's metadata is trusted before it is read again. */
const METADATA_TTL_MS = 60 * 60 * 1000;

/**
 * The relying party of OpenID Connect's authorization code flow, with PKCE (S256), state and
 * nonce, through `openid-client`. The provider's metadata is discovered on first use (and again
 * after an hour, or after a failure), so a provider down at start-up delays nothing else.
 */
export class SsoClient {
  private readonly config: SsoConfig;
  private discovered: { at: number; configuration: Promise<oidc.Configuration> } | undefined;

  constructor(config: SsoConfig) {
    this.config = config;
  }

  /** The provider's authorization URL for a new sign-in, and what its callback must match. */
  async start(): Promise<{ url: URL; pending: PendingLogin }> {
    const [oidc, configuration] = await Promise.all([openidClient(), this.configuration()]);
    const pending = { state: oidc.randomState(), nonce: oidc.randomNonce(), verifier: oidc.randomPKCECodeVerifier() };
    const scope = [...new Set(['openid', ...this.config.scopes])].join(' ');
    const url = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: this.config.redirect_url,
      scope,
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
    });
    return { url, pending };
  }

  /**
   * The callback's query checked against the pending sign-in (state), the code exchanged with
   * its verifier, the ID token checked (signature, issuer, audience, nonce). The mapped claim is
   * read from the ID token, or from the userinfo endpoint when the token leaves it out.
   */
  async finish(query: URLSearchParams, pending: PendingLogin): Promise<SignedIn> {
    const [oidc, configuration] = await Promise.all([openidClient(), this.configuration()]);
    // The redirect URL as registered, whatever Host the request came with behind a proxy.
    const current = new URL(this.config.redirect_url);
    current.search = query.toString();
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(configuration, current, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      throw errors.ssoFailed(describe(err));
    }
    const idClaims = tokens.claims();
    if (!idClaims || !tokens.id_token) throw errors.ssoFailed('the provider sent no ID token');
    let claims: Record<string, unknown> = { ...idClaims };
    const head = this.config.claim.split('.')[0];
    if (!(head in claims) && configuration.serverMetadata().userinfo_endpoint) {
      try {
        claims = { ...(await oidc.fetchUserInfo(configuration, tokens.access_token, idClaims.sub)), ...claims };
      } catch (err) {
        throw errors.ssoFailed(`the userinfo endpoint: ${describe(err)}`);
      }
    }
    const text = (name: string) => (typeof claims[name] === 'string' ? (claims[name] as string) : null);
    return {
      identity: { issuer: idClaims.iss, subject: idClaims.sub, email: text('email'), name: text('name') },
      claims,
      idToken: tokens.id_token,
    };
  }

  /**
   * Where to send the browser to sign out of the provider too (RP-initiated logout), when the
   * provider has an end_session_endpoint; undefined otherwise, or when it cannot be reached.
   */
  async endSessionUrl(idToken: string | null): Promise<string | undefined> {
    let configuration: oidc.Configuration;
    try {
      configuration = await this.configuration();
    } catch {
      return undefined;
    }
    if (!configuration.serverMetadata().end_session_endpoint) return undefined;
    const oidc = await openidClient();
    const parameters: Record<string, string> = {
      client_id: this.config.client_id,
      post_logout_redirect_uri: this.config.post_logout_redirect_url ?? new URL('/console/', this.config.redirect_url).href,
    };
    if (idToken) parameters.id_token_hint = idToken;
    return oidc.buildEndSessionUrl(configuration, parameters).href;
  }

  private configuration(): Promise<oidc.Configuration> {
    const now = Date.now();
    if (this.discovered && now - this.discovered.at < METADATA_TTL_MS) return this.discovered.configuration;
    const { issuer, client_id, client_secret } = this.config;
    const server = new URL(issuer);
    const configuration = openidClient()
      .then((oidc) =>
        oidc.discovery(server, client_id, client_secret, client_secret ? oidc.ClientSecretPost(client_secret) : oidc.None(), {
          // http:// is allowed by the config only to this machine (sso-schema.ts).
          execute: server.protocol === 'http:' ? [oidc.allowInsecureRequests] : [],
          timeout: 10,
        }),
      )
      .catch((err: unknown) => {
        this.discovered = undefined;
        throw errors.ssoProviderUnavailable(describe(err));
      });
    this.discovered = { at: now, configuration };
    return configuration;
  }
}

function describe(err: unknown): string {
  if (err instanceof GatewayError) return err.message;
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return err instanceof Error ? `${err.message}${cause}` : String(err);
}
