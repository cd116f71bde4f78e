import assert from 'node:assert/strict';
import { test } from 'node:test';
import { realtimeUrl } from './realtime-url.ts';

test('an https base URL becomes wss, with /realtime and the model', () => {
  assert.equal(realtimeUrl('https://api.openai.com/v1', 'gpt-realtime'), 'wss://api.openai.com/v1/realtime?model=gpt-realtime');
});

test('an http base URL becomes ws; a trailing slash and a model needing escapes are handled', () => {
  assert.equal(realtimeUrl('http://127.0.0.1:8080/v1/', 'a b&c'), 'ws://127.0.0.1:8080/v1/realtime?model=a+b%26c');
});

test("Azure's v1 path keeps its prefix", () => {
  assert.equal(
    realtimeUrl('https://res.openai.azure.com/openai/v1', 'my-deployment'),
    'wss://res.openai.azure.com/openai/v1/realtime?model=my-deployment',
  );
});
