import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { test } from 'node:test';
import { createCors } from './apply-cors.ts';

/** The headers a response ends up with: setHeader ones merged under writeHead's, as node does. */
function exchange(origins: '*' | string[], method: string, headers: Record<string, string>) {
  const set: Record<string, string> = {};
  let status: number | undefined;
  const res = {
    setHeader: (name: string, value: string) => void (set[name.toLowerCase()] = value),
    writeHead(code: number, extra: Record<string, string>) {
      status = code;
      for (const [name, value] of Object.entries(extra)) set[name.toLowerCase()] = value;
      return this;
    },
    end: () => {},
  } as unknown as ServerResponse;
  const answered = createCors(origins)({ method, headers } as IncomingMessage, res);
  return { answered, status, headers: set };
}

const APP = 'https://app.example.com';
const preflight = (origin: string, requestHeaders?: string) => ({
  origin,
  'access-control-request-method': 'POST',
  ...(requestHeaders ? { 'access-control-request-headers': requestHeaders } : {}),
});

test('off by default: no header at all, preflights left to the routes', () => {
  for (const [method, headers] of [
    ['POST', { origin: APP }],
    ['OPTIONS', preflight(APP)],
  ] as const) {
    const { answered, headers: sent } = exchange([], method, headers);
    assert.equal(answered, false);
    assert.deepEqual(sent, {});
  }
});

test('an allowed origin gets itself back, Vary: Origin and the exposed headers', () => {
  const { answered, headers } = exchange([APP], 'POST', { origin: APP });
  assert.equal(answered, false);
  assert.equal(headers['access-control-allow-origin'], APP);
  assert.equal(headers.vary, 'Origin');
  assert.match(
    headers['access-control-expose-headers'],
    /^x-request-id, x-sluice-cache, mcp-session-id, retry-after, retry-after-ms, x-should-retry, x-ratelimit-limit-requests/,
  );
});

test('another origin gets no CORS header, only Vary (its answer must not be cached for the allowed one)', () => {
  assert.deepEqual(exchange([APP], 'POST', { origin: 'https://evil.example' }).headers, { vary: 'Origin' });
  assert.deepEqual(exchange([APP], 'GET', {}).headers, { vary: 'Origin' });
});

test('the preflight of an allowed origin is answered 204 with methods, the allowlisted requested headers and max-age', () => {
  const sdkHeaders =
    'authorization,content-type,x-stainless-arch,x-stainless-lang,x-stainless-os,x-stainless-package-version,' +
    'x-stainless-retry-count,x-stainless-runtime,x-stainless-runtime-version,x-stainless-timeout';
  const { answered, status, headers } = exchange([APP], 'OPTIONS', preflight(APP, `${sdkHeaders},X-Sluice-Profile,x-sluice-tags`));
  assert.equal(answered, true);
  assert.equal(status, 204);
  assert.equal(headers['access-control-allow-origin'], APP);
  assert.equal(headers['access-control-allow-methods'], 'GET, POST, PATCH, DELETE');
  assert.equal(headers['access-control-allow-headers'], `${sdkHeaders.split(',').join(', ')}, x-sluice-profile, x-sluice-tags`);
  assert.equal(headers['access-control-max-age'], '600');
  assert.equal(headers.vary, 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers');
  assert.equal(headers['access-control-allow-private-network'], undefined);
});

test('a requested header outside the allowlist is left out, so the browser fails that preflight', () => {
  const { headers } = exchange([APP], 'OPTIONS', preflight(APP, 'content-type, x-forwarded-for, cookie, x-stainless-'));
  assert.equal(headers['access-control-allow-headers'], 'content-type');
});

test('a preflight from an origin not allowed is a 403 cors_origin_not_allowed, with no CORS header', () => {
  assert.throws(() => exchange([APP], 'OPTIONS', preflight('https://evil.example')), { status: 403, code: 'cors_origin_not_allowed' });
  assert.throws(() => exchange([APP], 'OPTIONS', preflight('null')), { status: 403 });
});

test('"*" allows every origin with a literal *, and no Vary', () => {
  const { headers } = exchange('*', 'POST', { origin: 'https://any.example' });
  assert.equal(headers['access-control-allow-origin'], '*');
  assert.equal(headers.vary, undefined);
  const pre = exchange(['*'], 'OPTIONS', preflight('https://any.example', 'authorization'));
  assert.equal(pre.status, 204);
  assert.equal(pre.headers['access-control-allow-origin'], '*');
});

test("Chromium's private network preflight is allowed for a listed origin", () => {
  const { headers } = exchange([APP], 'OPTIONS', { ...preflight(APP), 'access-control-request-private-network': 'true' });
  assert.equal(headers['access-control-allow-private-network'], 'true');
});

test('an OPTIONS without Access-Control-Request-Method is no preflight: left to the routes', () => {
  const { answered, status } = exchange([APP], 'OPTIONS', { origin: APP });
  assert.equal(answered, false);
  assert.equal(status, undefined);
});
