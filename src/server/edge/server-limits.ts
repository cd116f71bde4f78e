import type { ServerOptions } from 'node:http';
import type { Config } from '../../config/schema.ts';

type ServerLimits = Pick<Config['server'], 'headers_timeout_s' | 'request_timeout_s'>;

/**
 * node:http's own slow-client guards, tightened. Node's defaults (headers 60 s, whole request
 * 300 s, checked every 30 s) let a slowloris connection hold a socket ~90 s before its 408.
 * Both timeouts cover receiving the request only: node stops watching a connection once the
 * request has fully arrived, so a long SSE response is never cut (test/e2e/edge.test.ts). The
 * config refuses a headers timeout longer than the request timeout (config/schema.ts).
 */
export function serverOptions(limits: ServerLimits): ServerOptions {
  const headersTimeout = Math.round(limits.headers_timeout_s * 1000);
  const requestTimeout = Math.round(limits.request_timeout_s * 1000);
  const shortest = Math.min(...[headersTimeout, requestTimeout].filter((ms) => ms > 0));
  return {
    headersTimeout,
    requestTimeout,
    // The sweep that enforces both: a quarter of the shortest timeout, at most 1 s, so a timeout
    // fires within 25% (or 1 s) of its value. Its cost is one pass over the open connections.
    connectionsCheckingInterval: Number.isFinite(shortest) ? Math.max(50, Math.min(1000, Math.round(shortest / 4))) : 1000,
    // Checked by edge/check-host.ts, which answers in the OpenAI error shape.
    requireHostHeader: false,
  };
}
