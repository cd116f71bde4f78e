import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { routes } from '../routes.ts';
import { ADMIN_OPERATIONS, adminOpenApi } from './admin-openapi.ts';

/** The admin API's routes: the paths under /admin/ (the console's API is the console's, not documented here). */
const adminRoutes = routes.filter((r) => r.path.startsWith('/admin/'));

describe("the admin API's OpenAPI document against the route table", () => {
  const doc = adminOpenApi() as {
    openapi: string;
    paths: Record<string, Record<string, { parameters?: { name: string; in: string }[]; requestBody?: unknown }>>;
  };
  const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));

  it('documents every admin route with its method, and nothing that is not a route', () => {
    assert.equal(doc.openapi, '3.1.0');
    assert.deepEqual(documented.sort(), adminRoutes.map((r) => `${r.method} ${r.path}`).sort());
  });

  it('every admin route asks for an admin; its query parameters are the ones it reads', () => {
    for (const route of adminRoutes) {
      assert.equal(route.auth, 'admin', route.path);
      const op = doc.paths[route.path][route.method.toLowerCase()];
      const query = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      assert.deepEqual(query.sort(), [...(route.query ?? [])].sort(), `${route.method} ${route.path}`);
      const path = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
      assert.deepEqual(
        path,
        [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => name),
      );
    }
  });

  it('request bodies come from the zod schemas the routes parse with: PATCH bodies are strict and nullable where they clear', () => {
    const body = (key: keyof typeof ADMIN_OPERATIONS) => {
      const [method, path] = key.split(' ');
      return (doc.paths[path][method.toLowerCase()].requestBody as { content: { 'application/json': { schema: Record<string, any> } } }).content[
        'application/json'
      ].schema;
    };
    const key = body('PATCH /admin/keys/{key_id}');
    assert.equal(key.additionalProperties, false);
    assert.deepEqual(Object.keys(key.properties).sort(), ['budgets', 'disabled', 'expires_at', 'expires_in_s', 'models', 'name', 'tier']);
    assert.ok(JSON.stringify(key.properties.tier).includes('"null"'), JSON.stringify(key.properties.tier));
    assert.deepEqual(body('POST /admin/projects').required, ['name']);
    assert.ok(body('PATCH /admin/endpoints/{project}/{endpoint}').properties.stream_profile);
    const cache = body('PATCH /admin/endpoints/{project}/{endpoint}').properties.cache;
    assert.ok(JSON.stringify(cache).includes('"null"') && JSON.stringify(cache).includes('ttl_s'), JSON.stringify(cache));
    assert.deepEqual(body('POST /admin/endpoints').properties.cache.required, ['ttl_s']);
  });

  it("an endpoint's answered cache is the config's cache object (both fields, as filled in), or null", () => {
    const endpoint = (doc as unknown as { components: { schemas: Record<string, any> } }).components.schemas.Endpoint;
    const [setting, none] = endpoint.properties.cache.anyOf;
    assert.deepEqual(Object.keys(setting.properties).sort(), ['max_bytes', 'ttl_s']);
    assert.deepEqual(setting.required.sort(), ['max_bytes', 'ttl_s']);
    assert.deepEqual(none, { type: 'null' });
  });
});
