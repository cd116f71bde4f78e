import { z } from 'zod';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** HTTPS, or HTTP to this very machine (a provider run beside sluice, as the tests do). */
function secureOrLoopback(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  return protocol === 'https:' || (protocol === 'http:' && LOOPBACK_HOSTS.has(hostname));
}

const httpsUrl = z.url().refine(secureOrLoopback, 'must be an https:// URL (http:// only to 127.0.0.1, localhost or [::1])');

/** Sign-in to the console with OpenID Connect (docs/governance/users.md). */
export const ssoSchema = z
  .strictObject({
    issuer: httpsUrl.describe(
      "The identity provider's issuer URL: its discovery document is `<issuer>/.well-known/openid-configuration`.",
    ),
    client_id: z.string().min(1).describe("sluice's client id at the identity provider."),
    client_secret: z
      .string()
      .optional()
      .transform((secret) => secret || undefined)
      .describe("The client's secret (SLUICE_SSO_CLIENT_SECRET); empty: a public client (PKCE alone)."),
    redirect_url: httpsUrl.describe(
      'Where the identity provider sends the browser back: `https://<sluice>/console/api/sso/callback`, registered at the provider.',
    ),
    post_logout_redirect_url: httpsUrl
      .optional()
      .describe(
        "Where the provider sends the browser after signing out of it (RP-initiated logout), registered at the provider; unset: the console's page at the redirect URL's origin.",
      ),
    scopes: z
      .array(z.string().min(1))
      .default(['openid', 'email', 'profile'])
      .describe('The scopes asked for (`openid` is always added); some providers need one more for the claim (`groups`).'),
    claim: z
      .string()
      .min(1)
      .default('groups')
      .describe(
        'The claim whose values map to roles and projects, from the ID token or else the userinfo endpoint; a dotted path reaches into an object (`realm_access.roles`).',
      ),
    roles: z
      .record(z.string(), z.enum(['owner', 'admin', 'viewer']))
      .default({})
      .describe('Claim values and the role each grants (`sluice-owners: owner`); a user with several gets the strongest.'),
    projects: z
      .record(z.string(), z.array(z.string().min(1)))
      .default({})
      .describe(
        'Claim values and the projects (ids) each makes its user a member of (`team-a: [proj_a]`), for users with no role.',
      ),
  })
  .describe(
    'Console sign-in with OpenID Connect (authorization code with PKCE). Users are created at their first sign-in with the roles the claim maps to.',
  );

export type SsoConfig = z.infer<typeof ssoSchema>;
