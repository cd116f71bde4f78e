import assert from 'node:assert/strict';
import { describe, it, test } from 'node:test';
import { isRequestId, newRequestId } from './request-id.ts';

test('request ids are 20 url-safe characters', () => {
  for (let i = 0; i < 600; i++) assert.match(newRequestId(), /^[0-9a-z]{8}[A-Za-z0-9_-]{12}$/);
});

test('request ids sort by creation time as plain text', () => {
  const times = [0, 1, 35, 36, 1_700_000_000_000, 1_700_000_000_001, 1_800_000_000_000, 2_800_000_000_000];
  const ids = times.map((t) => newRequestId(t));
  assert.deepEqual([...ids].sort(), ids);
});

test('request ids made in the same millisecond differ (the pool refills past 256)', () => {
  const ids = new Set(Array.from({ length: 1000 }, () => newRequestId(1_800_000_000_000)));
  assert.equal(ids.size, 1000);
});

describe('isRequestId', () => {
  it('accepts the ids sluice issues and nothing else', () => {
    assert.ok(isRequestId(newRequestId()));
    assert.ok(!isRequestId(''));
    assert.ok(!isRequestId('chatcmpl-abc'));
    assert.ok(!isRequestId(`${newRequestId()}x`));
  });
});
