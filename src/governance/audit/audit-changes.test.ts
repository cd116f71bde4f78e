import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { auditChanges, REDACTED } from './audit-changes.ts';

const KEY = `sk-sluice-0123456789abcdef_${'A'.repeat(43)}`;

describe('auditChanges', () => {
  it('keeps only the fields that changed, before and after', () => {
    const before = { id: 'k1', status: 'active', revoked_at: null, budgets: { daily_usd: 1 } };
    const after = { id: 'k1', status: 'revoked', revoked_at: '2026-01-01T00:00:00.000Z', budgets: { daily_usd: 1 } };
    assert.deepEqual(auditChanges(before, after), {
      before: { status: 'active', revoked_at: null },
      after: { status: 'revoked', revoked_at: '2026-01-01T00:00:00.000Z' },
    });
  });

  it('a field one side lacks is null there', () => {
    assert.deepEqual(auditChanges({ a: 1 }, { b: 2 }), { before: { a: 1, b: null }, after: { a: null, b: 2 } });
  });

  it('a creation keeps the whole new object, a deletion the whole old one', () => {
    assert.deepEqual(auditChanges(null, { id: 'p', name: 'P' }), { before: null, after: { id: 'p', name: 'P' } });
    assert.deepEqual(auditChanges({ id: 'p' }, null), { before: { id: 'p' }, after: null });
  });

  it('leaves out fields named like secrets, at any depth, and keeps fields about them', () => {
    const after = {
      key: KEY,
      secret_hash: 'ab',
      previousHash: 'cd',
      api_key: 'sk-up',
      client_secret: 'cs',
      oidc: { access_token: 't', issuer: 'https://idp' },
      key_id: 'k1',
      previous_secret_valid_until: null,
      prefix: 'sk-sluice-0123456789abcdef',
    };
    assert.deepEqual(auditChanges(null, after).after, {
      oidc: { issuer: 'https://idp' },
      key_id: 'k1',
      previous_secret_valid_until: null,
      prefix: 'sk-sluice-0123456789abcdef',
    });
  });

  it('a changed secret is no change at all', () => {
    assert.deepEqual(auditChanges({ id: 'k', secret_hash: 'a' }, { id: 'k', secret_hash: 'b' }), { before: {}, after: {} });
  });

  it('redacts a whole gateway key and any string holding a given secret, wherever it is', () => {
    const after = { note: KEY, list: ['ok', 'with sk-master-1 inside'], name: 'plain' };
    assert.deepEqual(auditChanges(null, after, ['sk-master-1', '']).after, {
      note: REDACTED,
      list: ['ok', REDACTED],
      name: 'plain',
    });
  });
});
