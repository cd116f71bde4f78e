import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isLoopbackHost, parseHostHeader } from './parse-host-header.ts';

test('a Host header becomes its lowercased name, without port, brackets or trailing dot', () => {
  const cases: [string, string][] = [
    ['localhost', 'localhost'],
    ['LocalHost:8080', 'localhost'],
    ['localhost.:8080', 'localhost'],
    ['127.0.0.1:65535', '127.0.0.1'],
    ['[::1]', '::1'],
    ['[::1]:8080', '::1'],
    ['[0:0:0:0:0:0:0:1]:80', '::1'],
    ['[::FFFF:127.0.0.1]', '::ffff:7f00:1'],
    ['api.example.com', 'api.example.com'],
    ['my_host-1.internal:9', 'my_host-1.internal'],
  ];
  for (const [header, host] of cases) assert.equal(parseHostHeader(header), host, header);
});

test('what is not a host is refused rather than guessed at', () => {
  for (const header of [
    '',
    ':8080',
    'localhost:',
    'localhost:port',
    'localhost:123456',
    'a@127.0.0.1',
    'evil.example/127.0.0.1',
    'local host',
    '::1',
    '[::1',
    '[::1]x',
    '[127.0.0.1]',
    'a..b',
    '%6cocalhost',
  ]) {
    assert.equal(parseHostHeader(header), undefined, header);
  }
});

test('loopback: localhost, *.localhost, 127.0.0.0/8, ::1 and mapped 127.x; nothing else', () => {
  for (const host of ['localhost', 'app.localhost', '127.0.0.1', '127.255.3.4', '::1', '::ffff:7f00:1', '::ffff:7fff:ffff']) {
    assert.ok(isLoopbackHost(host), host);
  }
  for (const host of [
    'localhost.evil.example',
    'evil.example',
    '128.0.0.1',
    '10.0.0.1',
    '0.0.0.0',
    '::',
    '::2',
    '::ffff:a00:1',
    '127.0.0.1.nip.io',
    '127.1',
  ]) {
    assert.ok(!isLoopbackHost(host), host);
  }
});
