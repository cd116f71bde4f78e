import { parseKey } from '../keys/key-format.ts';

export type AuditFields = Record<string, unknown>;

/**
 * A field whose name says it holds a secret: its last word is one of these (`api_key`,
 * `secret_hash`, `client_secret`, `access_token`), not a field about one (`key_id`,
 * `previous_secret_valid_until`).
 */
const SECRET_WORDS = new Set([
  'key',
  'secret',
  'hash',
  'password',
  'passphrase',
  'token',
  'pepper',
  'credential',
  'credentials',
  'cookie',
  'authorization',
]);

function isSecretName(name: string): boolean {
  const words = name
    .split(/[_\-.\s]+|(?=[A-Z])/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
  return SECRET_WORDS.has(words.at(-1) ?? '');
}

export const REDACTED = '[redacted]';

/**
 * A value with every secret left out: fields named like a secret are dropped (at any depth), and
 * a string that is a whole gateway key, or that contains one of `secrets` (the master key, a
 * client secret), is replaced by `[redacted]`.
 */
function withoutSecrets(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') {
    const leaks = parseKey(value) !== undefined || secrets.some((s) => s.length > 0 && value.includes(s));
    return leaks ? REDACTED : value;
  }
  if (Array.isArray(value)) return value.map((v) => withoutSecrets(v, secrets));
  if (value !== null && typeof value === 'object') {
    const kept: AuditFields = {};
    for (const [name, v] of Object.entries(value)) if (!isSecretName(name)) kept[name] = withoutSecrets(v, secrets);
    return kept;
  }
  return value;
}

/**
 * What an audit entry keeps of a change: for an update, only the fields whose values differ,
 * before and after; for a creation (no `before`) or a deletion (no `after`), the whole object.
 * Secrets are left out of both first, so a changed secret shows as no field at all.
 */
export function auditChanges(
  before: AuditFields | null,
  after: AuditFields | null,
  secrets: readonly string[] = [],
): { before: AuditFields | null; after: AuditFields | null } {
  const b = before === null ? null : (withoutSecrets(before, secrets) as AuditFields);
  const a = after === null ? null : (withoutSecrets(after, secrets) as AuditFields);
  if (b === null || a === null) return { before: b, after: a };
  const changedBefore: AuditFields = {};
  const changedAfter: AuditFields = {};
  for (const name of new Set([...Object.keys(b), ...Object.keys(a)])) {
    if (JSON.stringify(b[name]) === JSON.stringify(a[name])) continue;
    // A field one side lacks is null there (JSON has no undefined).
    changedBefore[name] = b[name] ?? null;
    changedAfter[name] = a[name] ?? null;
  }
  return { before: changedBefore, after: changedAfter };
}
