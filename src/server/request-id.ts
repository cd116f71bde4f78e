import { randomBytes } from 'node:crypto';

/** 20 url-safe characters: the X-Request-ID, and the tail of the response id the client sees. */
export function newRequestId(): string {
  return randomBytes(15).toString('base64url');
}
