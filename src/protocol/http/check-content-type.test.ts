import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import { requireJsonContentType } from './check-content-type.ts';

const withType = (type?: string) => ({ headers: type === undefined ? {} : { 'content-type': type } }) as IncomingMessage;

test('application/json passes, with parameters and in any case', () => {
  for (const type of ['application/json', 'application/json; charset=utf-8', 'Application/JSON', ' application/json ;charset=UTF-8']) {
    assert.doesNotThrow(() => requireJsonContentType(withType(type)), type);
  }
});

test('the types a browser sends cross-site without a preflight get 415 unsupported_media_type', () => {
  for (const type of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
    assert.throws(
      () => requireJsonContentType(withType(type)),
      (err: GatewayError) => err.status === 415 && err.code === 'unsupported_media_type' && err.message.includes(type),
      type,
    );
  }
});

test('a body without a Content-Type, or an empty one, is refused too (a Blob without a type is sent like that)', () => {
  for (const type of [undefined, '']) {
    assert.throws(() => requireJsonContentType(withType(type)), { status: 415, code: 'unsupported_media_type' });
  }
});

test('look-alikes are not JSON', () => {
  for (const type of ['application/jsonp', 'application/json-seq', 'text/json', 'application/x-json']) {
    assert.throws(() => requireJsonContentType(withType(type)), { status: 415 }, type);
  }
});
