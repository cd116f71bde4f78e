import { errors } from '../../errors/catalog.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import { upstreamHttpError } from '../../errors/upstream-error.ts';

/** The scope of a Vertex AI access token. */
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/** Where google-auth-library exchanges a service account's signed JWT, whatever the key says. */
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

/** The fields of a service-account key file (JSON) that sign the JWT. */
export interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  private_key_id?: string;
  /** The token endpoint the key names (Google's, or a private one). */
  token_uri?: string;
}

/**
 * How sluice authenticates to Vertex AI: a service-account key (a JWT it signs, exchanged for an
 * access token), an access token given as it is, or Application Default Credentials (the
 * metadata server on Google Cloud, workload identity).
 */
export type VertexCredentials = { key: ServiceAccountKey } | { accessToken: string } | { applicationDefault: true };

interface TokenClient {
  getAccessToken(): Promise<{ token?: string | null }>;
}

/**
 * The access token of each call, through google-auth-library (loaded at the first call, not at
 * start), which keeps it and renews it before it expires (five minutes before, its default). A
 * refused exchange is a 502 saying sluice's credentials were refused; neither key nor token is
 * ever put in an error or a log.
 */
export function createVertexTokenSource(provider: string, credentials: VertexCredentials): () => Promise<string> {
  let client: Promise<TokenClient> | undefined;
  return async () => {
    client ??= tokenClient(credentials);
    let token: string | null | undefined;
    try {
      token = (await (await client).getAccessToken()).token;
    } catch (err) {
      // Asked again next time: Application Default Credentials may come back (a metadata server restarting).
      client = undefined;
      if (err instanceof GatewayError) throw err;
      const why = err instanceof Error ? err.message : String(err);
      throw upstreamHttpError({ provider, status: 401, message: `the Google access token request failed: ${why}` });
    }
    if (!token) throw errors.malformed(provider, 'google-auth-library returned no access token');
    return token;
  };
}

async function tokenClient(credentials: VertexCredentials): Promise<TokenClient> {
  const auth = await import('google-auth-library');
  if ('accessToken' in credentials) {
    const client = new auth.OAuth2Client();
    client.setCredentials({ access_token: credentials.accessToken });
    return client;
  }
  if ('applicationDefault' in credentials) return new auth.GoogleAuth({ scopes: [CLOUD_PLATFORM_SCOPE] }).getClient();
  const { key } = credentials;
  const jwt = new auth.JWT({
    email: key.client_email,
    key: key.private_key,
    keyId: key.private_key_id,
    scopes: [CLOUD_PLATFORM_SCOPE],
  });
  // The library posts the JWT to Google's endpoint; a key that names another one is honoured.
  const tokenUri = key.token_uri;
  if (tokenUri && tokenUri !== GOOGLE_TOKEN_URL) {
    jwt.transporter.interceptors.request.add({
      resolved: async (options) => {
        if (options.url.href === GOOGLE_TOKEN_URL) options.url = new URL(tokenUri);
        return options;
      },
    });
  }
  return jwt;
}
