import type { IncomingMessage } from 'node:http';
import { errors } from '../../errors/catalog.ts';

/**
 * A JSON body must be declared as JSON (`application/json`, any parameters, any case). Not only
 * tidiness: text/plain, form-encoded and bodies without a type are what a browser sends
 * cross-site without a CORS preflight, so accepting them would let any web page spend a keyless
 * loopback gateway's provider credits. Requiring application/json makes every such request a
 * preflighted one, which the CORS policy (off by default) then refuses.
 */
export function requireJsonContentType(req: IncomingMessage): void {
  const header = req.headers['content-type'];
  if (mediaType(header) !== 'application/json') throw errors.unsupportedMediaType(header);
}

/** `Application/JSON ; charset=utf-8` -> `application/json` (RFC 9110 8.3.1: type and subtype are case-insensitive). */
function mediaType(header: string | undefined): string {
  if (!header) return '';
  const semicolon = header.indexOf(';');
  return (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase();
}
