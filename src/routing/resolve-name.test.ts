import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errors } from '../errors/catalog.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import type { ProviderAdapter } from '../providers/types.ts';
import { resolveName } from './resolve-name.ts';

const serving: Record<string, string[]> = { 'gpt-4o-mini': ['openai'], 'llama-3.1-8b': ['groq', 'local'] };
const registry = {
  resolve(name: string) {
    const slash = name.indexOf('/');
    if (slash <= 0) throw errors.modelNotFound(name, 'name models as provider/model.');
    return { adapter: {} as ProviderAdapter, provider: name.slice(0, slash), model: name.slice(slash + 1), requested: name };
  },
  providers: () => ['mock', 'openai', 'groq', 'local'],
  servingProviders: (model: string) => serving[model] ?? [],
} as unknown as ProviderRegistry;

const notFound = (pattern: RegExp) => (err: unknown) =>
  err instanceof GatewayError && err.code === 'model_not_found' && err.status === 404 && pattern.test(err.message);

describe('resolveName', () => {
  it('provider/model as the registry resolves it', () => {
    assert.equal(resolveName(registry, 'groq/llama-3.1-8b', []).provider, 'groq');
  });

  it('a bare id served by exactly one enabled provider goes there, answered as named', () => {
    const target = resolveName(registry, 'gpt-4o-mini', []);
    assert.deepEqual([target.provider, target.model, target.requested], ['openai', 'gpt-4o-mini', 'gpt-4o-mini']);
  });

  it('a bare id several providers serve is a 404 listing them', () => {
    assert.throws(() => resolveName(registry, 'llama-3.1-8b', []), notFound(/groq\/llama-3\.1-8b, local\/llama-3\.1-8b/));
  });

  it('a bare id nobody serves is a 404 listing the enabled providers and the public names', () => {
    assert.throws(() => resolveName(registry, 'gpt-9', ['smart', 'fast']), notFound(/mock, openai, groq, local.*smart, fast/));
  });
});
