import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ConfigError } from '../config/config-error.ts';
import { configSchema } from '../config/schema.ts';
import { createProviderRegistry } from '../providers/registry.ts';
import { UpstreamClient } from '../upstream/http-client.ts';
import { createRouter } from './router.ts';

const client = new UpstreamClient({ connectTimeoutMs: 1000, headersTimeoutMs: 1000 });
after(() => client.close());

function router(file: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) {
  const config = configSchema.parse(file);
  return createRouter(config, createProviderRegistry(config, env, client));
}

describe('createRouter', () => {
  const routes = {
    smart: { targets: [{ model: 'mock/echo' }, { model: 'anthropic/claude-sonnet-4-5' }] },
    cheap: { targets: [{ model: 'groqq/llama-3.1-8b-instant' }] },
  };

  it('a route whose target provider is not enabled started silently: refused at start, naming the route, the target, the provider and how to enable it', () => {
    assert.throws(
      () => router({ routes }),
      (err) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(
          err.message,
          "routes.smart.targets[1] (anthropic/claude-sonnet-4-5): provider 'anthropic' is not configured: set ANTHROPIC_API_KEY or add it to the config file. " +
            "routes.cheap.targets[0] (groqq/llama-3.1-8b-instant): no provider named 'groqq' (configured: mock).",
        );
        return true;
      },
    );
  });

  it('starts once every target provider is enabled', () => {
    const { smart } = routes;
    const started = router({ routes: { smart } }, { ANTHROPIC_API_KEY: 'sk-ant-test' });
    assert.deepEqual(
      started.plan('smart').primary.map((c) => c.key),
      ['mock/echo', 'anthropic/claude-sonnet-4-5'],
    );
  });
});
