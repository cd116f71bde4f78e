import { createHash, timingSafeEqual } from 'node:crypto';
import { errors } from '../errors/catalog.ts';
import { type Authenticate, MASTER } from '../pipeline/admit.ts';

/**
 * Bearer-key check against SLUICE_MASTER_KEY. Keys are compared as SHA-256 digests so the
 * comparison is constant-time whatever the lengths. With no key configured, every request
 * passes (startup refuses that unless bound to loopback).
 */
export function createAuthenticate(masterKey: string | undefined): Authenticate {
  if (!masterKey) return () => MASTER;
  const expected = createHash('sha256').update(masterKey).digest();
  return (req) => {
    const header = req.headers.authorization ?? (req.headers['x-api-key'] as string | undefined);
    if (!header) throw errors.missingKey();
    const key = header.startsWith('Bearer ') ? header.slice(7).trim() : header.trim();
    if (!key) throw errors.missingKey();
    const given = createHash('sha256').update(key).digest();
    if (!timingSafeEqual(given, expected)) throw errors.wrongKey();
    return MASTER;
  };
}
