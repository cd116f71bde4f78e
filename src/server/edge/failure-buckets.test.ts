import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FailureBuckets } from './failure-buckets.ts';

test('a burst of `limit` failures is allowed, then the subject waits for one to be repaid', () => {
  const table = new FailureBuckets(10);
  for (let i = 0; i < 10; i++) {
    assert.equal(table.retryAfterMs('a', 1000), 0);
    table.fail('a', 1000);
  }
  // 10 a minute: one failure is repaid every 6 s.
  assert.equal(table.retryAfterMs('a', 1000), 6000);
  assert.equal(table.retryAfterMs('a', 4000), 3000);
  assert.equal(table.retryAfterMs('a', 7000), 0);
  assert.equal(table.retryAfterMs('b', 1000), 0);
});

test('failures while throttled do not push the wait further', () => {
  const table = new FailureBuckets(2);
  for (let i = 0; i < 50; i++) table.fail('a', 0);
  assert.equal(table.retryAfterMs('a', 0), 30_000);
});

test('bounded: past capacity the subject that failed longest ago is forgotten', () => {
  const table = new FailureBuckets(1, 3);
  for (const subject of ['a', 'b', 'c']) table.fail(subject, 0);
  table.fail('a', 1); // a is now the most recent
  table.fail('d', 2);
  assert.equal(table.size, 3);
  assert.equal(table.retryAfterMs('b', 3), 0);
  assert.ok(table.retryAfterMs('a', 3) > 0);
  assert.ok(table.retryAfterMs('c', 3) > 0);
});

test('the table empties once the buckets are full again, so the success path finds it empty', () => {
  const table = new FailureBuckets(10);
  table.fail('a', 0);
  table.fail('b', 0);
  assert.equal(table.size, 2);
  assert.equal(table.retryAfterMs('c', 60_000), 0);
  assert.equal(table.size, 0);
});
