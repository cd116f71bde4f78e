import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errors } from '../errors/catalog.ts';
import type { PipelineContext } from './context.ts';
import type { ProviderRegistry, ResolvedModel } from '../providers/registry.ts';
import type { Endpoint } from '../governance/keys/governance-store.ts';
import { endpointContext, streamOverrides, withEndpointModel } from './endpoint-context.ts';

const ENDPOINT: Endpoint = {
  projectId: 'p',
  name: 'e',
  model: 'fast',
  streamProfile: null,
  usage: 'always',
  errorStyle: null,
  vendorEvents: null,
  cache: null,
  createdAt: 0,
};

const registry = {
  resolve(name: string) {
    if (name === 'fast' || name === 'mock/echo') return { provider: 'mock', model: 'echo', requested: name } as ResolvedModel;
    if (name === 'bad') throw errors.invalidRequest('a different failure', 'model');
    throw errors.modelNotFound(name, 'unknown');
  },
} as unknown as ProviderRegistry;

const resolveOn = (endpoint: Endpoint | undefined) => {
  const view = endpointContext({ registry } as PipelineContext, 'p', 'e', endpoint).registry;
  return (name: string) => view.resolve(name);
};

describe('endpointContext', () => {
  it("resolves what resolves; anything else is the endpoint's model, echoed as the client named it", () => {
    const resolve = resolveOn(ENDPOINT);
    assert.equal(resolve('mock/echo').requested, 'mock/echo');
    assert.deepEqual({ ...resolve('llama-3.1-8b') }, { provider: 'mock', model: 'echo', requested: 'llama-3.1-8b' });
    assert.throws(() => resolve('bad'), /a different failure/);
    assert.throws(() => resolveOn(undefined)('llama-3.1-8b'), /does not exist/);
  });

  it('fills a missing or empty model, and keeps the stream settings the endpoint sets', () => {
    assert.deepEqual(withEndpointModel({ messages: [] }, ENDPOINT), { messages: [], model: 'fast' });
    assert.deepEqual(withEndpointModel({ model: '' }, ENDPOINT), { model: 'fast' });
    assert.deepEqual(withEndpointModel({ model: 'x' }, ENDPOINT), { model: 'x' });
    assert.deepEqual(withEndpointModel([1], ENDPOINT), [1]);
    assert.deepEqual(streamOverrides(ENDPOINT), { usage: 'always' });
    assert.deepEqual(streamOverrides({ ...ENDPOINT, vendorEvents: 'passthrough' }), { usage: 'always', vendor_events: 'passthrough' });
    assert.deepEqual(streamOverrides(undefined), {});
  });

  it("carries the endpoint's cache setting to the cache step, none where it has none", () => {
    const cache = { ttl_s: 10, max_bytes: 500 };
    const ctx = { registry } as PipelineContext;
    assert.deepEqual(endpointContext(ctx, 'p', 'e', { ...ENDPOINT, cache }).endpointCache, cache);
    assert.equal(endpointContext(ctx, 'p', 'e', ENDPOINT).endpointCache, undefined);
    assert.equal(endpointContext(ctx, 'p', 'e', undefined).endpointCache, undefined);
  });
});
