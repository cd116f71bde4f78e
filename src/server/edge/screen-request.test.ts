import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { test } from 'node:test';
import { configSchema } from '../../config/schema.ts';
import { createRequestScreen } from './screen-request.ts';

const APP = 'https://app.example.com';

function response() {
  const headers: Record<string, unknown> = {};
  const res = {
    statusCode: 0,
    setHeader: (name: string, value: unknown) => void (headers[name.toLowerCase()] = value),
    writeHead(status: number, extra: Record<string, unknown>) {
      res.statusCode = status;
      for (const [name, value] of Object.entries(extra)) headers[name.toLowerCase()] = value;
      return res;
    },
    end: () => {},
  };
  return { res, headers };
}
const preflight = (host: string) =>
  ({ method: 'OPTIONS', httpVersion: '1.1', headers: { host, origin: APP, 'access-control-request-method': 'POST' } }) as unknown as IncomingMessage;

test('the Host check comes first: a rebound preflight is refused even from an allowed origin', () => {
  const screen = createRequestScreen(configSchema.parse({ server: { cors_origins: [APP] } }));
  const { res, headers } = response();
  assert.throws(() => screen(preflight('evil.example'), res as unknown as ServerResponse), { status: 403, code: 'host_not_allowed' });
  assert.deepEqual(headers, {});
});

test('past the Host check, an allowed preflight is answered here', () => {
  const screen = createRequestScreen(configSchema.parse({ server: { cors_origins: [APP] } }));
  const { res, headers } = response();
  assert.equal(screen(preflight('127.0.0.1:8080'), res as unknown as ServerResponse), true);
  assert.equal(res.statusCode, 204);
  assert.equal(headers['access-control-allow-origin'], APP);
});

test('the defaults: loopback only without a key, no CORS header, nothing answered', () => {
  const screen = createRequestScreen(configSchema.parse({}));
  const { res, headers } = response();
  const get = { method: 'GET', httpVersion: '1.1', headers: { host: 'localhost:8080', origin: APP } } as unknown as IncomingMessage;
  assert.equal(screen(get, res as unknown as ServerResponse), false);
  assert.deepEqual(headers, {});
});

test('the config refuses an origin that could never match (path, trailing slash, "null") and a host with a port', () => {
  for (const origin of ['https://app.example.com/', 'https://app.example.com/chat', 'null', 'app.example.com']) {
    assert.equal(configSchema.safeParse({ server: { cors_origins: [origin] } }).success, false, origin);
  }
  for (const host of ['api.example.com:443', 'http://api.example.com', '*', '*.']) {
    assert.equal(configSchema.safeParse({ server: { allowed_hosts: [host] } }).success, false, host);
  }
  const ok = configSchema.parse({ server: { cors_origins: ['http://localhost:3000', '*'], allowed_hosts: ['*.example.com', '[::1]', '10.0.0.5'] } });
  assert.deepEqual(ok.server.cors_origins, ['http://localhost:3000', '*']);
  assert.equal(configSchema.parse({ server: { cors_origins: '*' } }).server.cors_origins, '*');
});
