import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { errors } from '../../src/errors/catalog.ts';
import { ERROR_CODES, type GatewayError } from '../../src/errors/gateway-error.ts';

// docs/reference/errors.md has one entry (a `### \`code\`` heading) per code of the catalog, and
// each entry states the status and type the catalog gives the code (like fastify's errors-doc test).
const page = readFileSync(new URL('../../docs/reference/errors.md', import.meta.url), 'utf8');
const entries = new Map(
  page
    .split(/^### /m)
    .slice(1)
    .map((section) => [/^`([a-z_]+)`/.exec(section)?.[1] ?? section.split('\n')[0], section] as const),
);

/** One call of every factory of the catalog, and of each of its variants. */
const made: Record<keyof typeof errors, GatewayError[]> = {
  invalidRequest: [errors.invalidRequest('m', 'p')],
  invalidJson: [errors.invalidJson('d')],
  bodyTooLarge: [errors.bodyTooLarge(1)],
  headersTooLarge: [errors.headersTooLarge()],
  requestTimeout: [errors.requestTimeout()],
  malformedHttp: [errors.malformedHttp()],
  unsupportedMediaType: [errors.unsupportedMediaType('text/plain')],
  hostNotAllowed: [errors.hostNotAllowed('h')],
  missingHost: [errors.missingHost()],
  corsOriginNotAllowed: [errors.corsOriginNotAllowed('o')],
  missingKey: [errors.missingKey()],
  wrongKey: [errors.wrongKey()],
  modelNotFound: [errors.modelNotFound('m', 'r')],
  routeNotFound: [errors.routeNotFound('GET', '/')],
  requestNotFound: [errors.requestNotFound('i')],
  responseNotFound: [errors.responseNotFound('i'), errors.responseNotFound('i', 'previous_response_id')],
  fileNotFound: [errors.fileNotFound('i')],
  batchNotFound: [errors.batchNotFound('i')],
  batchesUnavailable: [errors.batchesUnavailable('d')],
  streamNotFound: [errors.streamNotFound('i')],
  streamExpired: [errors.streamExpired('i', 'w')],
  streamBufferUnavailable: [errors.streamBufferUnavailable()],
  methodNotAllowed: [errors.methodNotAllowed('GET', '/')],
  idleTimeout: [errors.idleTimeout(1)],
  deadline: [errors.deadline(1)],
  cancelled: [errors.cancelled('w')],
  shuttingDown: [errors.shuttingDown()],
  truncated: [errors.truncated('p')],
  malformed: [errors.malformed('p', 'd')],
  connection: [errors.connection('p', 'd')],
  rateLimited: [errors.rateLimited('m', {})],
  quotaExceeded: [errors.quotaExceeded('m', {})],
  limitsUnavailable: [errors.limitsUnavailable()],
  tierDeadline: [errors.tierDeadline('t', 1)],
  keyRevoked: [errors.keyRevoked()],
  keyExpired: [errors.keyExpired()],
  keyDisabled: [errors.keyDisabled()],
  keyStoreUnavailable: [errors.keyStoreUnavailable()],
  metricsUnavailable: [errors.metricsUnavailable('w')],
  reconciliationRunning: [errors.reconciliationRunning('p')],
  providerReportUnavailable: [errors.providerReportUnavailable('w')],
  configInvalid: [errors.configInvalid('p')],
  reloadIncomplete: [errors.reloadIncomplete('w')],
  adminRequired: [errors.adminRequired()],
  roleRequired: [errors.roleRequired('admin', 'viewer')],
  ssoFailed: [errors.ssoFailed('w')],
  ssoNoRole: [errors.ssoNoRole('groups')],
  ssoProviderUnavailable: [errors.ssoProviderUnavailable('w')],
  mcpToolNotFound: [errors.mcpToolNotFound('n')],
  mcpToolNotAllowed: [errors.mcpToolNotAllowed('n')],
  mcpServerUnavailable: [errors.mcpServerUnavailable('s')],
  mcpToolTimeout: [errors.mcpToolTimeout('n', 1)],
  mcpResultTooLarge: [errors.mcpResultTooLarge('n', 1)],
  modelNotAllowed: [errors.modelNotAllowed('m')],
  endpointNotFound: [errors.endpointNotFound('p', 'e')],
  notFound: (['project', 'key', 'endpoint', 'user'] as const).map((what) => errors.notFound(what, 'i')),
  alreadyExists: (['project', 'key', 'endpoint'] as const).map((what) => errors.alreadyExists(what, 'i', 'p')),
  keyChanged: [errors.keyChanged('i')],
  projectHasKeys: [errors.projectHasKeys('p', 2)],
  authThrottled: [errors.authThrottled('address', 1000), errors.authThrottled('key_id', 1000)],
  clientRequestLimit: [errors.clientRequestLimit(1)],
  storeUnavailable: [errors.storeUnavailable('w')],
  conversationNotFound: [errors.conversationNotFound('i', 'conversation')],
  itemNotFound: [errors.itemNotFound('i', 'input[0].id')],
  gatewayStopped: [errors.gatewayStopped()],
};

describe('docs/reference/errors.md', () => {
  it('has an entry for every code of the catalog', () => {
    const missing = ERROR_CODES.filter((code) => !entries.has(code));
    assert.deepEqual(missing, [], `add an entry (### \`code\`) to docs/reference/errors.md for: ${missing.join(', ')}`);
  });

  it('has no entry for a code the catalog does not have', () => {
    const codes: ReadonlySet<string> = new Set(ERROR_CODES);
    const extra = [...entries.keys()].filter((code) => !codes.has(code));
    assert.deepEqual(extra, [], `docs/reference/errors.md documents codes that ERROR_CODES lacks: ${extra.join(', ')}`);
  });

  it('states the status and type each error of the catalog is raised with', () => {
    const wrong = Object.values(made)
      .flat()
      .filter((error) => {
        const entry = entries.get(error.code) ?? '';
        const head = entry.slice(0, entry.indexOf('- **When**'));
        return !head.includes(String(error.status)) || !head.includes(`\`${error.type}\``);
      })
      .map((error) => `${error.code}: ${error.status} \`${error.type}\``);
    assert.deepEqual(wrong, [], 'each entry begins with the status and `type` of every way the catalog raises its code');
  });
});
