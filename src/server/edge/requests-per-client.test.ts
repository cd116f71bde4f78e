import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RequestsPerClient } from './requests-per-client.ts';

test('a client is held to the limit of requests in flight; others are not affected; leaving frees a place', () => {
  const requests = new RequestsPerClient(2);
  assert.ok(requests.enter('a'));
  assert.ok(requests.enter('a'));
  assert.equal(requests.enter('a'), false);
  assert.ok(requests.enter('b'));
  requests.leave('a');
  assert.ok(requests.enter('a'));
  for (const client of ['a', 'a', 'b']) requests.leave(client);
  assert.equal(requests.clients, 0);
});
