import type { IncomingMessage, ServerResponse } from 'node:http';
import { errors } from '../../errors/catalog.ts';

/**
 * Request headers a browser page may send: what the openai SDK sends from a browser
 * (openai-node `buildHeaders`: Accept, Content-Type, Authorization, X-Stainless-* (lang, os,
 * arch, runtime, retry count, timeout, helper method), OpenAI-Organization / OpenAI-Project when
 * set, OpenAI-Beta on beta resources), sluice's own, and what the Anthropic SDK sends to
 * /v1/messages (`x-api-key`, `anthropic-version`, `anthropic-beta`, and from a browser
 * `anthropic-dangerous-direct-browser-access`).
 */
const ALLOWED_HEADERS = new Set([
  'accept',
  'authorization',
  'content-type',
  'x-api-key',
  'anthropic-version',
  'anthropic-beta',
  'anthropic-dangerous-direct-browser-access',
  'x-sluice-profile',
  'x-sluice-tags',
  // The exact response cache (docs/operations/response-cache.md): refresh or bypass it per request.
  'x-sluice-cache',
  'cache-control',
  // A browser MCP client (src/mcp): its session and protocol version on every request after the first.
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
  'openai-beta',
  'openai-organization',
  'openai-project',
  'idempotency-key',
]);
const ALLOWED_HEADER_PREFIX = 'x-stainless-';

/**
 * Response headers a page may read: the request id, the response cache's outcome, the retry hints
 * the SDK obeys, and the MCP session a browser MCP client must send back.
 */
const EXPOSED_HEADERS = [
  'x-request-id',
  'x-sluice-cache',
  'mcp-session-id',
  'retry-after',
  'retry-after-ms',
  'x-should-retry',
  'x-ratelimit-limit-requests',
  'x-ratelimit-limit-tokens',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-requests',
  'x-ratelimit-reset-tokens',
].join(', ');

/**
 * The methods a page may send: the API's GET and POST, and the admin API's PATCH and DELETE
 * (editing and deleting projects, keys and endpoints). An admin key is still needed for those.
 */
const ALLOWED_METHODS = 'GET, POST, PATCH, DELETE';

/** Browsers cache a preflight this long (Chromium caps it at 7200 s anyway). */
const MAX_AGE_S = '600';

/**
 * CORS from `server.cors_origins` (exact origins, or "*"); empty: off, no Access-Control-* header
 * at all. Headers are set with setHeader before any handler runs, so every response merges them,
 * SSE streams (whose writeHead passes its own headers) and error JSON alike. Returns true when it
 * answered a preflight itself; a preflight from an origin not allowed is a 403 without CORS
 * headers (the browser fails it either way; the status says why in the gateway's logs).
 */
export function createCors(origins: '*' | readonly string[]): (req: IncomingMessage, res: ServerResponse) => boolean {
  const list = origins === '*' ? ['*'] : origins;
  if (list.length === 0) return () => false;
  const anyOrigin = list.includes('*');
  const allowed = new Set(list);

  return (req, res) => {
    // Exact origins make every response depend on Origin: a shared cache must not serve one
    // origin's answer (with or without Allow-Origin) to another.
    if (!anyOrigin) res.setHeader('Vary', 'Origin');
    const origin = req.headers.origin;
    const preflight =
      req.method === 'OPTIONS' && origin !== undefined && req.headers['access-control-request-method'] !== undefined;
    if (origin === undefined) return false;
    if (!anyOrigin && !allowed.has(origin)) {
      if (preflight) throw errors.corsOriginNotAllowed(origin);
      return false;
    }
    res.setHeader('Access-Control-Allow-Origin', anyOrigin ? '*' : origin);
    if (!preflight) {
      res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
      return false;
    }
    const headers: Record<string, string> = {
      'Access-Control-Allow-Methods': ALLOWED_METHODS,
      'Access-Control-Max-Age': MAX_AGE_S,
    };
    const requested = allowedRequestHeaders(req.headers['access-control-request-headers']);
    if (requested) headers['Access-Control-Allow-Headers'] = requested;
    // Chromium's Private Network Access: a public origin the operator listed may reach a gateway
    // on a private or loopback address only if the preflight says so.
    if (req.headers['access-control-request-private-network'] === 'true')
      headers['Access-Control-Allow-Private-Network'] = 'true';
    if (!anyOrigin) headers.Vary = 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers';
    res.writeHead(204, headers).end();
    return true;
  };
}

/** The requested headers that are in the allowlist; a header left out makes the browser fail the preflight. */
function allowedRequestHeaders(requested: string | undefined): string {
  if (!requested) return '';
  return requested
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(
      (name) =>
        ALLOWED_HEADERS.has(name) || (name.startsWith(ALLOWED_HEADER_PREFIX) && name.length > ALLOWED_HEADER_PREFIX.length),
    )
    .join(', ');
}
