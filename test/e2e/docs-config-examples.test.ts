import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load-config.ts';
import { createProviderRegistry } from '../../src/providers/registry.ts';
import { UpstreamClient } from '../../src/upstream/http-client.ts';

const docs = new URL('../../docs/', import.meta.url).pathname;
/** Every ```yaml block of the docs' pages, with the page it is in. */
const examples = readdirSync(docs, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.md') && !file.startsWith('.'))
  .toSorted()
  .flatMap((file) =>
    [...readFileSync(join(docs, file), 'utf8').matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].map((m, i) => ({
      name: `docs/${relative(docs, join(docs, file))} example ${i + 1}`,
      yaml: m[1],
    })),
  );
const dir = mkdtempSync(join(tmpdir(), 'sluice-docs-config-'));
const client = new UpstreamClient({ connectTimeoutMs: 1000, headersTimeoutMs: 1000 });
after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await client.close();
});

/** The config and the providers the gateway would start with, from the example as written. */
function start(example: string, index: number, env: NodeJS.ProcessEnv) {
  const file = join(dir, `example-${index}.yaml`);
  writeFileSync(file, example);
  const config = loadConfig({ file, env });
  return { config, registry: createProviderRegistry(config, env, client) };
}

describe('the config examples of the docs', () => {
  it('finds them (the configuration page, tiers, routes, metrics, logs, traces, the edge ...)', () => assert.ok(examples.length >= 6));

  examples.forEach(({ name, yaml: example }, i) => {
    it(`${name} starts with no variable set, as docs/configuration.md says: only the mock enabled`, () => {
      const { config, registry } = start(example, i, {});
      assert.deepEqual(registry.providers(), ['mock']);
      assert.equal(config.auth.master_key, undefined);
      assert.equal(config.store.database_url, undefined);
    });

    it(`${name} enables every provider it names once their variables are set`, () => {
      const names = [...example.matchAll(/\$\{([A-Z0-9_]+)(?::-[^}]*)?\}/g)].map((m) => m[1]);
      const env = Object.fromEntries(names.map((name) => [name, `value-of-${name}`]));
      // A real PostgreSQL URL would be opened by the gateway, not by loadConfig: any string does here.
      const { config, registry } = start(example, i, env);
      assert.deepEqual(registry.providers().toSorted(), ['mock', ...Object.keys(config.providers)].toSorted());
      for (const { model_name } of config.model_list) assert.ok(registry.resolve(model_name).provider);
    });
  });
});
