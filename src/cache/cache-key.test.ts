import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import { type CacheKeyParts, cacheKey, stableJson } from './cache-key.ts';

const request: CanonicalRequest = { model: 'fast', messages: [{ role: 'user', content: 'hi' }], temperature: 0 };
const parts: CacheKeyParts = { projectId: 'p1', surface: 'chat', requestedModel: 'fast', target: 'up/gpt-4o', request };

describe('cacheKey', () => {
  it('is the same whatever the order of the fields', () => {
    const reordered: CanonicalRequest = { temperature: 0, messages: [{ content: 'hi', role: 'user' }], model: 'fast' };
    assert.equal(cacheKey(parts), cacheKey({ ...parts, request: reordered }));
  });

  it('leaves out how the answer is delivered and who asked', () => {
    const streamed: CanonicalRequest = {
      ...request,
      user: 'u-42',
      metadata: { ticket: '7' },
      extra: { stream: true, stream_options: { include_usage: true } },
    };
    assert.equal(cacheKey({ ...parts, request: streamed }), cacheKey(parts));
  });

  it('differs for every field that can change the answer', () => {
    const base = cacheKey(parts);
    const changed: CacheKeyParts[] = [
      { ...parts, projectId: 'p2' },
      { ...parts, projectId: null },
      { ...parts, surface: 'responses' },
      { ...parts, requestedModel: 'up/gpt-4o' },
      { ...parts, target: 'other/gpt-4o' },
      { ...parts, request: { ...request, messages: [{ role: 'user', content: 'hello' }] } },
      { ...parts, request: { ...request, temperature: 1 } },
      { ...parts, request: { ...request, n: 2 } },
      { ...parts, request: { ...request, seed: 7 } },
      { ...parts, request: { ...request, response_format: { type: 'json_object' } } },
      { ...parts, request: { ...request, tools: [{ type: 'function', function: { name: 'f' } }] } },
      { ...parts, request: { ...request, extra: { top_k: 5 } } },
    ];
    const keys = new Set(changed.map(cacheKey));
    assert.equal(keys.size, changed.length);
    assert.ok(!keys.has(base));
  });
});

describe('stableJson', () => {
  it('sorts keys at every depth and drops undefined members', () => {
    assert.equal(stableJson({ b: [{ d: 1, c: undefined }], a: null }), '{"a":null,"b":[{"d":1}]}');
  });
});
