import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configSchema } from '../../config/schema.ts';
import type { Caller } from '../../admission/admission.ts';
import { TierBook, tierDisplayName } from './tier-policy.ts';

const caller = (tier: string | null): Caller => ({ keyId: 'k', projectId: 'p', tier, allowedModels: null, admin: false, budgets: [] });

describe('tier policy', () => {
  const config = configSchema.parse({
    default_tier: 'free',
    tiers: {
      free: { deadline_s: 30, requests_per_minute: 20, budgets: [{ period: 'day', limit_usd: 1 }] },
      pro: { idle_timeout_s: 0, project: { concurrent_requests: 8 }, abandoned_streams: 'void', redis_unavailable: 'fail_closed' },
      plain: {},
    },
  });

  it('a caller gets its own tier, else the default; an unknown name gets the default and is logged once', () => {
    const logs: string[] = [];
    const book = new TierBook(config, (m) => logs.push(m));
    assert.equal(book.of(caller('pro'))?.name, 'pro');
    assert.equal(book.of(caller(null))?.name, 'free');
    assert.equal(book.of(caller('gold'))?.name, 'free');
    assert.equal(book.of(caller('gold'))?.name, 'free');
    assert.deepEqual(logs, ['limits: tier "gold" is not in the config\'s tiers; its callers get the default tier free']);
  });

  it('compiles the settings: times in ms, limits per key and per project, defaults for the policies', () => {
    const book = new TierBook(config, () => {});
    const free = book.of(caller('free'));
    assert.deepEqual(
      { deadlineMs: free?.deadlineMs, idle: free?.idleTimeoutMs, key: free?.key, limited: free?.limited, budgets: free?.budgets },
      {
        deadlineMs: 30_000,
        idle: undefined,
        key: { requestsPerMinute: 20, tokensPerMinute: undefined, concurrentRequests: undefined },
        limited: true,
        budgets: [{ scope: 'key', period: 'day', limitUsd: 1 }],
      },
    );
    assert.equal(free?.abandoned, 'bill_generated');
    assert.equal(free?.redisUnavailable, 'fail_open');
    const pro = book.of(caller('pro'));
    assert.equal(pro?.idleTimeoutMs, 0);
    assert.equal(pro?.project.concurrentRequests, 8);
    assert.equal(pro?.abandoned, 'void');
    assert.equal(book.of(caller('plain'))?.limited, false);
  });

  it('default_tier must name a tier of the config', () => {
    const result = configSchema.safeParse({ default_tier: 'gold', tiers: { free: {} } });
    assert.equal(result.success, false);
    assert.deepEqual(
      result.error?.issues.map((i) => [i.path.join('.'), i.message]),
      [['default_tier', 'names no tier of tiers (free)']],
    );
  });

  it('names a tier as clients read it', () => {
    assert.equal(tierDisplayName('free'), 'Free');
  });
});
