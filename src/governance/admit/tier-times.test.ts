import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configSchema } from '../../config/schema.ts';
import { compileTier } from '../limits/tier-policy.ts';
import { tierTimes } from './tier-times.ts';

const tier = (config: Record<string, unknown>) => compileTier('pro_plus', configSchema.parse({ tiers: { pro_plus: config } }).tiers.pro_plus);

describe('tierTimes', () => {
  it("sets only what the tier sets: the config's stream settings stand for the rest", () => {
    assert.deepEqual(tierTimes(undefined), {});
    assert.deepEqual(tierTimes(tier({ requests_per_minute: 5 })), {});
    assert.deepEqual(tierTimes(tier({ idle_timeout_s: 0.5, on_disconnect: 'drain' })), { idleTimeoutMs: 500, onDisconnect: 'drain' });
    assert.deepEqual(tierTimes(tier({ idle_timeout_s: 0 })), { idleTimeoutMs: 0 });
  });

  it("a tier's deadline comes with its error, naming the tier", () => {
    const { deadline } = tierTimes(tier({ deadline_s: 30 }));
    assert.equal(deadline?.ms, 30_000);
    const err = deadline.error();
    assert.deepEqual([err.status, err.code], [504, 'timeout']);
    assert.match(err.message, /after 30s\. Your .+ tier has a 30-second timeout limit\./);
  });
});
