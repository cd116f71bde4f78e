import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { chooseProtocol, keyFromProtocols, upstreamProtocols } from './client-key.ts';

const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

test("a browser's key subprotocol becomes the Authorization header, never an upstream protocol", () => {
  const req = request({ 'sec-websocket-protocol': 'realtime, openai-insecure-api-key.sk-abc, openai-beta.realtime-v1' });
  keyFromProtocols(req);
  assert.equal(req.headers.authorization, 'Bearer sk-abc');
  assert.deepEqual(upstreamProtocols(req), ['realtime', 'openai-beta.realtime-v1']);
});

test('an Authorization header wins over the subprotocol', () => {
  const req = request({ authorization: 'Bearer sk-header', 'sec-websocket-protocol': 'openai-insecure-api-key.sk-abc' });
  keyFromProtocols(req);
  assert.equal(req.headers.authorization, 'Bearer sk-header');
});

test('the answered subprotocol is realtime, else one that carries no key', () => {
  assert.equal(chooseProtocol(new Set(['openai-insecure-api-key.sk', 'realtime'])), 'realtime');
  assert.equal(chooseProtocol(new Set(['openai-insecure-api-key.sk', 'openai-beta.realtime-v1'])), 'openai-beta.realtime-v1');
  assert.equal(chooseProtocol(new Set(['openai-insecure-api-key.sk'])), false);
});
