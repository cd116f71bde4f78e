import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { retryAfterMs } from './retry-after.ts';

describe('retryAfterMs', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('reads seconds, milliseconds and HTTP dates', () => {
    assert.equal(retryAfterMs({ 'retry-after': '2' }, now), 2000);
    assert.equal(retryAfterMs({ 'retry-after': '1.5' }, now), 1500);
    assert.equal(retryAfterMs({ 'retry-after-ms': '250', 'retry-after': '9' }, now), 250);
    assert.equal(retryAfterMs({ 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }, now), 30_000);
  });
  it('ignores what it cannot read, a past date and zero', () => {
    assert.equal(retryAfterMs({}, now), null);
    assert.equal(retryAfterMs({ 'retry-after': 'soon' }, now), null);
    assert.equal(retryAfterMs({ 'retry-after': '0' }, now), null);
    assert.equal(retryAfterMs({ 'retry-after': 'Wed, 31 Dec 2025 00:00:00 GMT' }, now), null);
  });
  it('caps a cooldown at ten minutes', () => {
    assert.equal(retryAfterMs({ 'retry-after': '86400' }, now), 600_000);
  });
});
