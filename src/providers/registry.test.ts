import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ConfigError } from '../config/config-error.ts';
import { configSchema } from '../config/schema.ts';
import { UpstreamClient } from '../upstream/http-client.ts';
import { createProviderRegistry } from './registry.ts';

const client = new UpstreamClient({ connectTimeoutMs: 1000, headersTimeoutMs: 1000 });
after(() => client.close());

function providers(file: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): string[] {
  return createProviderRegistry(configSchema.parse(file), env, client).providers().toSorted();
}

describe('which providers the registry enables', () => {
  it('enables a preset or native provider by its key variable, or by a config entry with a key', () => {
    assert.deepEqual(providers({}, { GROQ_API_KEY: 'k', ANTHROPIC_API_KEY: 'k' }), ['anthropic', 'groq', 'mock']);
    assert.deepEqual(providers({ providers: { groq: { api_key: 'k' }, google: { api_key: 'k' } } }), ['google', 'groq', 'mock']);
  });

  it('leaves a provider whose api_key is written but empty disabled (`${VAR:-}` unset), preset, native or declared', () => {
    const file = {
      providers: {
        groq: { api_key: '' },
        anthropic: { api_key: '' },
        bedrock: { api_key: '' },
        vllm: { type: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1', api_key: '' },
      },
    };
    assert.deepEqual(providers(file), ['mock']);
    // Even where the environment has a key: the config entry wins, and it says empty.
    assert.deepEqual(providers(file, { GROQ_API_KEY: 'k' }), ['mock']);
  });

  it('enables a declared server without an api_key line (a keyless server)', () => {
    assert.deepEqual(providers({ providers: { vllm: { base_url: 'http://127.0.0.1:9/v1' } } }), ['mock', 'vllm']);
  });

  it('refuses a declared server without base_url with a ConfigError naming it', () => {
    assert.throws(
      () => providers({ providers: { vllm: { api_key: 'k' } } }),
      (err) => err instanceof ConfigError && /providers\.vllm: .*needs base_url/.test(err.message),
    );
  });
});
