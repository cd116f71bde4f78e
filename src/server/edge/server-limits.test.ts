import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { serverOptions } from './server-limits.ts';

const limits = (headers_timeout_s: number, request_timeout_s: number) => ({ headers_timeout_s, request_timeout_s });

test('the defaults: headers within 10 s, the whole request within 60 s, swept every second', () => {
  assert.deepEqual(serverOptions(limits(10, 60)), {
    headersTimeout: 10_000,
    requestTimeout: 60_000,
    connectionsCheckingInterval: 1000,
    requireHostHeader: false,
  });
});

test('a short timeout is swept at a quarter of its length, so it fires within 25% of it', () => {
  assert.equal(serverOptions(limits(1, 60)).connectionsCheckingInterval, 250);
  assert.equal(serverOptions(limits(0.1, 0.1)).connectionsCheckingInterval, 50);
  assert.equal(serverOptions(limits(0.25, 0)).headersTimeout, 250);
});

test('0 turns a timeout off (node semantics) and leaves the sweep at 1 s', () => {
  assert.deepEqual(serverOptions(limits(10, 0)), {
    headersTimeout: 10_000,
    requestTimeout: 0,
    connectionsCheckingInterval: 1000,
    requireHostHeader: false,
  });
  assert.equal(serverOptions(limits(0, 0)).connectionsCheckingInterval, 1000);
});

test('node accepts the options as given', () => {
  const server = createServer(serverOptions(limits(2, 5)));
  assert.equal(server.headersTimeout, 2000);
  assert.equal(server.requestTimeout, 5000);
});
