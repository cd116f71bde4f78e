import type { IncomingMessage } from 'node:http';
import { errors } from '../errors/catalog.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { recordAudit } from '../governance/audit/record-audit.ts';
import { sendJson } from '../protocol/http/send-json.ts';
import { mapClaims } from '../governance/users/claims-mapping.ts';
import type { User } from '../governance/users/users.ts';
import type { ConsoleCall } from './console-call.ts';
import { sessionCookie } from './sessions.ts';
import type { PendingLogin, SsoClient } from './sso.ts';

/** The sign-in in progress in a browser: only the callback's path reads it, for ten minutes. */
const PENDING_COOKIE = 'sluice_sso';
const PENDING_PATH = '/console/api/sso';
const PENDING_SECONDS = 600;

/** GET /console/api/sso: whether the login page offers "Sign in with SSO". */
export function handleSsoStatus({ res, ctx, requestId }: ConsoleCall): void {
  sendJson(res, 200, { object: 'sluice.sso', enabled: ctx.console.sso !== undefined }, { 'X-Request-ID': requestId });
}

/**
 * GET /console/api/sso/login: to the identity provider's sign-in page, with a new state, nonce
 * and PKCE verifier kept in an HttpOnly cookie. SameSite=Lax, not Strict: the provider's
 * redirect back is a top-level navigation from another site, which a Strict cookie misses.
 */
export async function handleSsoLogin({ req, res, ctx }: ConsoleCall): Promise<void> {
  const sso = ssoOf(ctx, req);
  const { url, pending } = await sso.start();
  const value = `${pending.state}.${pending.nonce}.${pending.verifier}`;
  res.writeHead(302, {
    Location: url.href,
    'Set-Cookie': pendingCookie(value, PENDING_SECONDS, secure(req, ctx)),
  });
  res.end();
}

/**
 * GET /console/api/sso/callback?code=&state=: the provider's answer checked and exchanged; the
 * user created (first sign-in) or brought up to date from the claim mapping; a console session
 * opened like a key's; back to the console. The one place where a user signs in.
 */
export async function handleSsoCallback(call: ConsoleCall): Promise<void> {
  const { req, res, ctx, search } = call;
  const sso = ssoOf(ctx, req);
  const pending = pendingOf(req);
  let user: Awaited<ReturnType<typeof signIn>>;
  try {
    user = await signIn(ctx, sso, search, pending);
  } catch (err) {
    // A refused sign-in (a forged or stale callback, a user no claim maps to), not a provider that is down.
    if (err instanceof GatewayError && (err.status === 401 || err.status === 403)) {
      await recordAudit(call, {
        action: 'console.sign_in_failed',
        target: { type: 'console', id: null },
        actor: null,
        errorCode: err.code,
      });
    }
    throw err;
  }
  const id = await ctx.console.sessions.openForUser(user.user, user.idToken);
  await recordAudit(call, {
    action: 'console.sign_in',
    target: { type: 'console', id: null },
    actor: { keyId: null, userId: user.user.id },
  });
  const https = secure(req, ctx);
  res.writeHead(303, {
    Location: '/console/',
    'Set-Cookie': [sessionCookie(id, https), pendingCookie('', 0, https)],
    'Cache-Control': 'no-store',
  });
  res.end();
}

async function signIn(
  ctx: ConsoleCall['ctx'],
  sso: SsoClient,
  search: URLSearchParams,
  pending: PendingLogin | undefined,
): Promise<{ user: User; idToken: string }> {
  if (!pending) throw errors.ssoFailed('no sign-in is in progress in this browser (or it began more than 10 minutes ago)');
  const signedIn = await sso.finish(search, pending);
  const mapping = ctx.config.auth.sso!;
  const user = await ctx.console.users.signIn(signedIn.identity, mapClaims(signedIn.claims, mapping), Date.now());
  if (!user) throw errors.ssoNoRole(mapping.claim);
  return { user, idToken: signedIn.idToken };
}

function ssoOf(ctx: ConsoleCall['ctx'], req: IncomingMessage): SsoClient {
  if (!ctx.console.sso) throw errors.routeNotFound(req.method ?? 'GET', (req.url ?? '').split('?')[0]);
  return ctx.console.sso;
}

function pendingOf(req: IncomingMessage): PendingLogin | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1 || part.slice(0, eq).trim() !== PENDING_COOKIE) continue;
    const [state, nonce, verifier] = part
      .slice(eq + 1)
      .trim()
      .split('.');
    if (state && nonce && verifier) return { state, nonce, verifier };
  }
  return undefined;
}

function pendingCookie(value: string, maxAge: number, https: boolean): string {
  return `${PENDING_COOKIE}=${value}; Path=${PENDING_PATH}; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${https ? '; Secure' : ''}`;
}

function secure(req: IncomingMessage, ctx: ConsoleCall['ctx']): boolean {
  return ctx.config.server.secure_cookies || ctx.addressing.isHttps(req);
}
