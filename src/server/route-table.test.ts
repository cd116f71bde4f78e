import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../errors/gateway-error.ts';
import { indexRoutes, matchRoute, type Route } from './route-table.ts';

const handle = () => {};
const table: Route[] = [
  { method: 'POST', path: '/v1/chat/completions', auth: 'model', handle },
  { method: 'POST', path: '/v1/responses', auth: 'model', handle },
  { method: 'GET', path: '/v1/responses/', param: 'response_id', auth: 'key', handle },
  { method: 'GET', path: '/healthz', auth: 'open', handle },
];

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return `${err.status} ${err.code}`;
  }
  return 'matched';
}

describe('matchRoute', () => {
  const index = indexRoutes(table);

  it('matches an exact path and method', () => {
    assert.equal(matchRoute(index, 'POST', '/v1/responses').route, table[1]);
  });

  it('matches a prefix route and hands back the raw parameter', () => {
    const m = matchRoute(index, 'GET', '/v1/responses/resp_%41bc');
    assert.equal(m.route, table[2]);
    assert.equal(m.rawParam, 'resp_%41bc');
  });

  it('a prefix with nothing after it is not the prefix route', () => {
    assert.equal(
      codeOf(() => matchRoute(index, 'GET', '/v1/responses/')),
      '404 route_not_found',
    );
  });

  it('answers 405 for a known path with another method, 404 for an unknown path', () => {
    assert.equal(
      codeOf(() => matchRoute(index, 'GET', '/v1/chat/completions')),
      '405 method_not_allowed',
    );
    assert.equal(
      codeOf(() => matchRoute(index, 'POST', '/v1/nothing')),
      '404 route_not_found',
    );
  });

  it('HEAD is served by the GET route', () => {
    assert.equal(matchRoute(index, 'HEAD', '/healthz').route, table[3]);
  });

  it('a template route matches one non-empty segment per {name} and hands them back raw', () => {
    const endpoint: Route = { method: 'POST', path: '/{project}/{endpoint}/v1/chat/completions', auth: 'model', handle };
    const withTemplate = indexRoutes([...table, endpoint]);
    const m = matchRoute(withTemplate, 'POST', '/proj_a/my%20ep/v1/chat/completions');
    assert.equal(m.route, endpoint);
    assert.deepEqual(m.rawParams, { project: 'proj_a', endpoint: 'my%20ep' });
    assert.deepEqual(matchRoute(withTemplate, 'POST', '/v1/chat/completions').rawParams, {});
    assert.equal(
      codeOf(() => matchRoute(withTemplate, 'POST', '/proj_a//v1/chat/completions')),
      '404 route_not_found',
    );
    assert.equal(
      codeOf(() => matchRoute(withTemplate, 'POST', '/a/b/c/v1/chat/completions')),
      '404 route_not_found',
    );
    assert.equal(
      codeOf(() => matchRoute(withTemplate, 'GET', '/a/b/v1/chat/completions')),
      '405 method_not_allowed',
    );
  });

  it('exact paths win over templates, templates over prefixes', () => {
    const prefix: Route = { method: 'POST', path: '/v1/', param: 'rest', auth: 'key', handle };
    const template: Route = { method: 'POST', path: '/v1/{x}', auth: 'key', handle };
    const routes = indexRoutes([prefix, template, ...table]);
    assert.equal(matchRoute(routes, 'POST', '/v1/responses').route, table[1]);
    assert.equal(matchRoute(routes, 'POST', '/v1/other').route, template);
    assert.equal(matchRoute(routes, 'POST', '/v1/other/deeper').route, prefix);
  });

  it('a path whose exact route has another method is served by a template or prefix route with the method', () => {
    const getOnly: Route = { method: 'GET', path: '/v1/models', auth: 'key', handle };
    const template: Route = { method: 'POST', path: '/v1/{x}', auth: 'key', handle };
    const prefix: Route = { method: 'POST', path: '/v1/', param: 'rest', auth: 'key', handle };
    assert.equal(matchRoute(indexRoutes([getOnly, template]), 'POST', '/v1/models').route, template);
    assert.equal(matchRoute(indexRoutes([getOnly, prefix]), 'POST', '/v1/models').route, prefix);
    assert.equal(
      codeOf(() => matchRoute(indexRoutes([getOnly]), 'POST', '/v1/models')),
      '405 method_not_allowed',
    );
  });
});
