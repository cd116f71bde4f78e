import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { configSchema } from '../../config/schema.ts';
import { clientKey, createClientAddressing, forwardedClient, normalizeAddress } from './client-address.ts';

const request = (peer: string, headers: Record<string, string> = {}, encrypted = false) =>
  ({ socket: { remoteAddress: peer, encrypted }, headers }) as unknown as IncomingMessage;

test('without trusted proxies the client is the peer, and forwarded headers are never read', () => {
  const edge = createClientAddressing([]);
  const req = request('::ffff:203.0.113.9', { 'x-forwarded-for': '198.51.100.1', 'x-forwarded-proto': 'https' });
  assert.equal(edge.clientOf(req), '203.0.113.9');
  assert.equal(edge.isHttps(req), false);
  assert.equal(edge.isHttps(request('127.0.0.1', {}, true)), true);
});

test('behind a trusted proxy the client is the rightmost untrusted hop of X-Forwarded-For', () => {
  const edge = createClientAddressing(['10.0.0.0/8', '::1']);
  assert.equal(edge.clientOf(request('10.0.0.5', { 'x-forwarded-for': '198.51.100.1' })), '198.51.100.1');
  // The client wrote the leftmost entry itself: only what trusted hops appended counts.
  assert.equal(edge.clientOf(request('::1', { 'x-forwarded-for': '1.1.1.1, 198.51.100.7, 10.0.0.9' })), '198.51.100.7');
  assert.equal(edge.clientOf(request('10.0.0.5')), '10.0.0.5');
  assert.equal(edge.clientOf(request('10.0.0.5', { 'x-forwarded-for': '10.0.0.7, 10.0.0.6' })), '10.0.0.7');
  assert.equal(edge.clientOf(request('10.0.0.5', { 'x-forwarded-for': 'bogus, 10.0.0.6' })), '10.0.0.6');
  assert.equal(edge.clientOf(request('10.0.0.5', { 'x-forwarded-for': 'bogus' })), '10.0.0.5');
  // An untrusted peer sending the header is itself the client.
  assert.equal(edge.clientOf(request('192.0.2.1', { 'x-forwarded-for': '198.51.100.1' })), '192.0.2.1');
});

test("X-Forwarded-Proto counts from a trusted proxy only, the nearest hop's value", () => {
  const edge = createClientAddressing(['127.0.0.1']);
  assert.equal(edge.isHttps(request('127.0.0.1', { 'x-forwarded-proto': 'HTTPS' })), true);
  assert.equal(edge.isHttps(request('127.0.0.1', { 'x-forwarded-proto': 'https, http' })), false);
  assert.equal(edge.isHttps(request('127.0.0.1', { 'x-forwarded-proto': 'http' })), false);
  assert.equal(edge.isHttps(request('127.0.0.2', { 'x-forwarded-proto': 'https' })), false);
});

test('forwardedClient with no header or no entry', () => {
  assert.equal(
    forwardedClient(undefined, () => false),
    undefined,
  );
  assert.equal(
    forwardedClient('', () => false),
    undefined,
  );
  assert.equal(
    forwardedClient(['198.51.100.1', '10.0.0.1'], (a) => a.startsWith('10.')),
    '198.51.100.1',
  );
});

test('an IPv6 client is counted by its /64; IPv4 and mapped IPv4 by the address', () => {
  assert.equal(clientKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  assert.equal(clientKey('2001:db8:1:2:bbbb:cccc:dddd:eeee'), '2001:db8:1:2::/64');
  assert.equal(clientKey('2001:0db8:0001:0002::9'), '2001:db8:1:2::/64');
  assert.equal(clientKey('::1'), '0:0:0:0::/64');
  assert.equal(clientKey('64:ff9b::192.0.2.1'), '64:ff9b:0:0::/64');
  assert.equal(clientKey('203.0.113.9'), '203.0.113.9');
  assert.equal(clientKey(normalizeAddress('::FFFF:203.0.113.9')), '203.0.113.9');
});

test('server.trusted_proxies takes addresses and CIDR blocks only', () => {
  const accepts = (entry: string) => configSchema.safeParse({ server: { trusted_proxies: [entry] } }).success;
  for (const entry of ['10.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8', '0.0.0.0/0']) assert.ok(accepts(entry), entry);
  for (const entry of ['proxy.internal', '10.0.0.0/33', 'fd00::/129', '10.0.0.0/', '10.0.0.0/8/8', '']) {
    assert.ok(!accepts(entry), entry);
  }
});
