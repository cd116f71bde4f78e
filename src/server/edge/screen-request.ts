import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../../config/schema.ts';
import { createCors } from './apply-cors.ts';
import { createHostCheck } from './check-host.ts';

/**
 * What every request meets before any route: the Host check (403 / 400, thrown) and CORS (headers
 * set on the response, so that whatever answers later carries them; a preflight answered here).
 * True when the request was answered. The Content-Type check lives with the body reader
 * (http-io.ts), so only routes that read a JSON body are concerned and an unknown route keeps
 * its 404.
 */
export function createRequestScreen(
  config: Pick<Config, 'server' | 'auth'>,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const checkHost = createHostCheck({ masterKey: config.auth.master_key, allowedHosts: config.server.allowed_hosts });
  const applyCors = createCors(config.server.cors_origins);
  return (req, res) => {
    checkHost(req);
    return applyCors(req, res);
  };
}
