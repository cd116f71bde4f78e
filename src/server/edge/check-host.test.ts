import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { createHostCheck } from './check-host.ts';

const request = (host?: string, httpVersion = '1.1') => ({ headers: host === undefined ? {} : { host }, httpVersion }) as IncomingMessage;
const refused = { status: 403, code: 'host_not_allowed' };

test('without a key only loopback names pass (DNS rebinding)', () => {
  const check = createHostCheck({ masterKey: undefined, allowedHosts: [] });
  for (const host of ['127.0.0.1:8080', 'localhost:8080', 'app.localhost', '[::1]:8080', '127.0.0.2']) {
    assert.doesNotThrow(() => check(request(host)), host);
  }
  for (const host of ['evil.example', 'evil.example:8080', '192.168.1.5:8080', 'localhost.evil.example', 'garbage/']) {
    assert.throws(() => check(request(host)), refused, host);
  }
});

test('without a key, allowed_hosts adds names to loopback (a local reverse proxy)', () => {
  const check = createHostCheck({ masterKey: undefined, allowedHosts: ['gw.example.com'] });
  assert.doesNotThrow(() => check(request('gw.example.com:443')));
  assert.doesNotThrow(() => check(request('127.0.0.1:8080')));
  assert.throws(() => check(request('evil.example')), refused);
});

test('with a key and no allowed_hosts, any host passes', () => {
  const check = createHostCheck({ masterKey: 'sk-master', allowedHosts: [] });
  for (const host of ['evil.example', '10.0.0.5:8080', 'whatever']) assert.doesNotThrow(() => check(request(host)), host);
});

test('with a key, allowed_hosts is exact (any case, any port) or a *. wildcard for subdomains', () => {
  const check = createHostCheck({ masterKey: 'sk-master', allowedHosts: ['API.example.com', '*.internal.example', '10.0.0.5', '[::1]'] });
  for (const host of ['api.example.com', 'Api.Example.Com:8443', 'a.internal.example', 'a.b.internal.example', '10.0.0.5:8080', '[::1]:80']) {
    assert.doesNotThrow(() => check(request(host)), host);
  }
  for (const host of ['example.com', 'internal.example', 'xinternal.example', 'api.example.com.evil.example', '127.0.0.1', 'localhost']) {
    assert.throws(() => check(request(host)), refused, host);
  }
});

test('a missing Host is a 400 on HTTP/1.1; on HTTP/1.0 it passes only where any host would', () => {
  const open = createHostCheck({ masterKey: 'sk-master', allowedHosts: [] });
  const loopback = createHostCheck({ masterKey: undefined, allowedHosts: [] });
  assert.throws(() => open(request(undefined, '1.1')), { status: 400, code: 'missing_host_header' });
  assert.throws(() => loopback(request(undefined, '1.1')), { status: 400, code: 'missing_host_header' });
  assert.doesNotThrow(() => open(request(undefined, '1.0')));
  assert.throws(() => loopback(request(undefined, '1.0')), refused);
});
