import { z } from 'zod';
import { cacheSettingSchema } from '../../config/schema.ts';
import {
  createEndpointSchema,
  createKeySchema,
  createProjectSchema,
  rotateKeySchema,
  updateEndpointSchema,
  updateKeySchema,
  updateProjectSchema,
} from '../../governance/keys/admin-requests.ts';
import { setAccessSchema } from '../../governance/users/user-requests.ts';
import { runReconciliationSchema } from '../../reconcile/run-request.ts';
import { sendJson } from '../../protocol/http/send-json.ts';
import type { RouteCall, RouteMethod } from '../route-table.ts';

/** One operation of the admin API as the document describes it. */
interface Operation {
  summary: string;
  /** The request body's schema (the one the route parses with); none: no body. */
  body?: z.ZodType;
  /** The answer's status and what it holds (a component schema's name). */
  status: 200 | 201;
  returns:
    | 'Project'
    | 'Key'
    | 'IssuedKey'
    | 'Endpoint'
    | 'ProjectList'
    | 'KeyList'
    | 'EndpointList'
    | 'DeletedProject'
    | 'DeletedEndpoint'
    | 'Reload'
    | 'AuditList'
    | 'User'
    | 'UserList'
    | 'Reconciliation'
    | 'ReconciliationList'
    | 'Document';
  /** The query parameters it reads (route.query): name and what it means. */
  query?: Record<string, string>;
}

/**
 * Every admin route, `METHOD path` as in the route table (a test holds the two equal). The
 * request bodies are the zod schemas the routes parse with (z.toJSONSchema), so the document
 * cannot drift from what the API accepts.
 */
export const ADMIN_OPERATIONS: Record<`${RouteMethod} /admin/${string}`, Operation> = {
  'GET /admin/openapi.json': { summary: 'This document.', status: 200, returns: 'Document' },
  'POST /admin/projects': { summary: 'Create a project.', body: createProjectSchema, status: 201, returns: 'Project' },
  'GET /admin/projects': {
    summary: 'List the projects, oldest first.',
    status: 200,
    returns: 'ProjectList',
    query: { include_deleted: 'true: the deleted projects too.' },
  },
  'PATCH /admin/projects/{project}': {
    summary: 'Edit a project: given fields change, null clears, absent ones are kept.',
    body: updateProjectSchema,
    status: 200,
    returns: 'Project',
  },
  'DELETE /admin/projects/{project}': {
    summary:
      'Delete a project softly (its ledger rows and spend stay, its id stays taken). 409 project_has_keys while it has live keys, unless force.',
    status: 200,
    returns: 'DeletedProject',
    query: { force: 'true: delete its keys with it.' },
  },
  'POST /admin/keys': {
    summary: 'Issue a key; the answer holds it, once.',
    body: createKeySchema,
    status: 201,
    returns: 'IssuedKey',
  },
  'GET /admin/keys': {
    summary: 'List the keys, oldest first: never a secret.',
    status: 200,
    returns: 'KeyList',
    query: { project: "Only this project's.", include_deleted: 'true: the deleted keys too.' },
  },
  'PATCH /admin/keys/{key_id}': {
    summary: 'Edit a key (name, tier, models, budgets, expiry) or disable and enable it.',
    body: updateKeySchema,
    status: 200,
    returns: 'Key',
  },
  'DELETE /admin/keys/{key_id}': {
    summary: 'Delete a key softly: refused as unknown (401), hidden from listings, its ledger rows and spend kept.',
    status: 200,
    returns: 'Key',
  },
  'POST /admin/keys/{key_id}/revoke': { summary: 'Revoke a key, for good.', status: 200, returns: 'Key' },
  'POST /admin/keys/{key_id}/rotate': {
    summary: 'A new secret for the key; the old one works for grace_s more.',
    body: rotateKeySchema,
    status: 200,
    returns: 'IssuedKey',
  },
  'POST /admin/endpoints': {
    summary: 'Create an endpoint of a project.',
    body: createEndpointSchema,
    status: 201,
    returns: 'Endpoint',
  },
  'GET /admin/endpoints': {
    summary: 'List the endpoints.',
    status: 200,
    returns: 'EndpointList',
    query: { project: "Only this project's." },
  },
  'PATCH /admin/endpoints/{project}/{endpoint}': {
    summary: "Edit an endpoint: given fields change, null goes back to the config's.",
    body: updateEndpointSchema,
    status: 200,
    returns: 'Endpoint',
  },
  'DELETE /admin/endpoints/{project}/{endpoint}': {
    summary: 'Delete an endpoint for good.',
    status: 200,
    returns: 'DeletedEndpoint',
  },
  'POST /admin/reload': {
    summary: 'Read the config again and apply it to the requests to come.',
    status: 200,
    returns: 'Reload',
  },
  'GET /admin/users': {
    summary: 'The console users (created at their first SSO sign-in), oldest first. An owner only.',
    status: 200,
    returns: 'UserList',
  },
  'GET /admin/users/{user_id}': { summary: 'One console user. An owner only.', status: 200, returns: 'User' },
  'POST /admin/users/{user_id}': {
    summary: "Set a user's role (and a member's projects); it then stays, whatever the claims say. An owner only.",
    body: setAccessSchema,
    status: 200,
    returns: 'User',
  },
  'GET /admin/audit': {
    summary: 'The audit log, newest first: every admin change and console sign-in (never a secret).',
    status: 200,
    returns: 'AuditList',
    query: {
      actor: "Only this actor's: master, or a key id.",
      action: 'Only this action (key.revoke, console.sign_in_failed, ...).',
      target_type: 'Only targets of this type (project, key, endpoint, config, console).',
      target_id: 'Only this target.',
      from: 'From this time (inclusive): ISO 8601 or epoch ms.',
      to: 'To this time (exclusive): ISO 8601 or epoch ms.',
      limit: 'Entries per page, 1 to 1000 (50).',
      cursor: "The previous page's next_cursor.",
    },
  },
  'GET /admin/reconciliations': {
    summary: "The stored reconciliations of the ledger against the providers' reports, newest first.",
    status: 200,
    returns: 'ReconciliationList',
    query: { provider: "Only this provider's.", limit: 'Results, 1 to 100 (20).' },
  },
  'POST /admin/reconciliations': {
    summary: "Reconcile a provider's ledger rows against its report over whole UTC days; stored and answered.",
    body: runReconciliationSchema,
    status: 200,
    returns: 'Reconciliation',
  },
};

const nullableString = { type: ['string', 'null'] };
const budgets = {
  type: 'object',
  properties: { daily_usd: { type: ['number', 'null'] }, monthly_usd: { type: ['number', 'null'] } },
};
const models = { type: ['array', 'null'], items: { type: 'string' } };
const time = { type: ['string', 'null'], format: 'date-time' };

/** What the admin API answers (src/governance/keys/admin-json.ts). */
const ANSWERS: Record<string, Record<string, unknown>> = {
  Project: {
    type: 'object',
    properties: {
      object: { const: 'sluice.project' },
      id: { type: 'string' },
      name: { type: 'string' },
      tier: nullableString,
      budgets,
      models,
      metadata: { type: ['object', 'null'], additionalProperties: { type: 'string' } },
      created_at: time,
      deleted_at: time,
    },
  },
  Key: {
    type: 'object',
    properties: {
      object: { const: 'sluice.key' },
      id: { type: 'string' },
      prefix: { type: 'string' },
      name: nullableString,
      project: { type: 'string' },
      tier: nullableString,
      models,
      budgets,
      admin: { type: 'boolean' },
      status: { enum: ['active', 'expired', 'disabled', 'revoked', 'deleted'] },
      created_at: time,
      expires_at: time,
      revoked_at: time,
      disabled_at: time,
      deleted_at: time,
      last_used_at: time,
      previous_secret_valid_until: time,
    },
  },
  IssuedKey: {
    allOf: [
      { $ref: '#/components/schemas/Key' },
      { type: 'object', properties: { key: { type: 'string', description: 'The key, shown only here.' } } },
    ],
  },
  Endpoint: {
    type: 'object',
    properties: {
      object: { const: 'sluice.endpoint' },
      project: { type: 'string' },
      name: { type: 'string' },
      model: { type: 'string' },
      stream_profile: nullableString,
      usage: nullableString,
      error_style: nullableString,
      vendor_events: nullableString,
      cache: {
        description: 'Its opt-in to the response cache; null: not cached through the endpoint (its route or tier may still be).',
        anyOf: [jsonSchemaOf(cacheSettingSchema, 'output'), { type: 'null' }],
      },
      base_path: { type: 'string' },
      created_at: time,
    },
  },
  DeletedProject: {
    allOf: [
      { $ref: '#/components/schemas/Project' },
      { type: 'object', properties: { deleted_keys: { type: 'array', items: { type: 'string' } } } },
    ],
  },
  DeletedEndpoint: {
    allOf: [{ $ref: '#/components/schemas/Endpoint' }, { type: 'object', properties: { deleted: { const: true } } }],
  },
  ProjectList: listOf('Project'),
  KeyList: listOf('Key'),
  EndpointList: listOf('Endpoint'),
  Reload: { type: 'object', description: 'What the reload applied (docs/operations/reload.md).' },
  User: {
    type: 'object',
    properties: {
      object: { const: 'user' },
      id: { type: 'string' },
      issuer: { type: 'string' },
      subject: { type: 'string' },
      email: nullableString,
      name: nullableString,
      role: { enum: ['owner', 'admin', 'viewer', 'member'] },
      projects: { type: 'array', items: { type: 'string' } },
      roles_from: { enum: ['claims', 'owner'] },
      created_at: { type: 'string', format: 'date-time' },
      last_sign_in_at: time,
    },
  },
  UserList: listOf('User'),
  AuditEntry: {
    type: 'object',
    properties: {
      object: { const: 'sluice.audit_entry' },
      id: { type: 'string' },
      created_at: { type: 'string', format: 'date-time' },
      actor: {
        type: 'object',
        properties: { kind: { type: 'string' }, id: nullableString, name: nullableString },
      },
      action: { type: 'string' },
      target: { type: 'object', properties: { type: { type: 'string' }, id: nullableString } },
      before: { type: ['object', 'null'], description: 'The changed fields before (null: created).' },
      after: { type: ['object', 'null'], description: 'The changed fields after (null: deleted).' },
      request_id: { type: 'string' },
      client_address: nullableString,
      error_code: nullableString,
    },
  },
  AuditList: {
    type: 'object',
    properties: {
      object: { const: 'list' },
      data: { type: 'array', items: { $ref: '#/components/schemas/AuditEntry' } },
      has_more: { type: 'boolean' },
      next_cursor: nullableString,
    },
  },
  Reconciliation: {
    type: 'object',
    description:
      'A run: both sides per day and model, the drift, the zero-priced lines, the verdict (docs/operations/reconciliation.md).',
    properties: {
      object: { const: 'sluice.reconciliation' },
      id: { type: 'string' },
      provider: { type: 'string' },
      from: { type: 'string', format: 'date' },
      to: { type: 'string', format: 'date' },
      status: { enum: ['ok', 'over', 'failed'] },
      error: nullableString,
      totals: { type: ['object', 'null'] },
      lines: { type: 'array', items: { type: 'object' } },
      zero_priced: { type: 'array', items: { type: 'object' } },
      missing_days: { type: 'array', items: { type: 'object' } },
      reasons: { type: 'array', items: { type: 'string' } },
    },
  },
  ReconciliationList: {
    type: 'object',
    properties: {
      object: { const: 'list' },
      data: { type: 'array', items: { $ref: '#/components/schemas/Reconciliation' } },
    },
  },
  Document: { type: 'object', description: 'An OpenAPI 3.1 document.' },
  Error: {
    type: 'object',
    properties: {
      error: {
        type: 'object',
        properties: { message: { type: 'string' }, type: { type: 'string' }, param: nullableString, code: { type: 'string' } },
      },
    },
  },
};

function listOf(item: string): Record<string, unknown> {
  return {
    type: 'object',
    properties: { object: { const: 'list' }, data: { type: 'array', items: { $ref: `#/components/schemas/${item}` } } },
  };
}

const errorAnswer = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

/** A zod schema as the document's JSON Schema: as a body is sent (`input`) or as an answer holds it (`output`). */
function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' });
  return json;
}

function requestBody(schema: z.ZodType): Record<string, unknown> {
  return { required: true, content: { 'application/json': { schema: jsonSchemaOf(schema, 'input') } } };
}

function operationJson(path: string, op: Operation): Record<string, unknown> {
  const parameters = [
    ...[...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
    ...Object.entries(op.query ?? {}).map(([name, description]) => ({
      name,
      in: 'query',
      required: false,
      description,
      schema: { type: 'string' },
    })),
  ];
  return {
    summary: op.summary,
    ...(parameters.length ? { parameters } : {}),
    ...(op.body ? { requestBody: requestBody(op.body) } : {}),
    responses: {
      [op.status]: {
        description: op.summary,
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${op.returns}` } } },
      },
      400: errorAnswer('A bad body or query parameter; param names the field.'),
      401: errorAnswer('No key, or a key that cannot authenticate.'),
      403: errorAnswer('A key that is neither the master key nor an admin key.'),
      ...(path.includes('{') ? { 404: errorAnswer('No such project, key or endpoint (or it was deleted).') } : {}),
    },
  };
}

/** The document, built once (the schemas are the code's, so it changes only with a new build). */
export function adminOpenApi(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [route, op] of Object.entries(ADMIN_OPERATIONS)) {
    const [method, path] = route.split(' ');
    paths[path] = { ...paths[path], [method.toLowerCase()]: operationJson(path, op) };
  }
  return {
    openapi: '3.1.0',
    // The API's own version (OpenAPI's info.version), not the package's: it changes when the API does.
    info: { title: 'sluice admin API', version: '1' },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'The master key or an admin key.' } },
      schemas: ANSWERS,
    },
    security: [{ bearer: [] }],
    paths,
  };
}

let built: Record<string, unknown> | undefined;

export function handleOpenApi({ res, requestId }: RouteCall): void {
  built ??= adminOpenApi();
  sendJson(res, 200, built, { 'X-Request-ID': requestId });
}
