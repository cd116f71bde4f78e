import { errors } from '../../errors/catalog.ts';
import { recordAudit } from '../../governance/audit/record-audit.ts';
import { endpointJson, keyJson, projectJson } from '../../governance/keys/admin-json.ts';
import { parseCreateEndpoint, parseCreateKey, parseCreateProject, parseRotateKey } from '../../governance/keys/admin-requests.ts';
import {
  createEndpoint,
  createKey,
  createProject,
  type IssuedKey,
  type ManageDeps,
  revokeKey,
  rotateKey,
} from '../../governance/keys/manage-keys.ts';
import { sendJson } from '../../protocol/http/send-json.ts';
import type { GatewayContext } from '../gateway-context.ts';
import { readJsonBody } from '../../protocol/http/read-json-body.ts';
import type { RouteCall } from '../route-table.ts';

/**
 * The admin API (routes with auth `admin`: the master key or an admin key). Every POST reads a
 * JSON body, `{}` at least: a bodyless POST is what a web page can send cross-site without a
 * preflight, so requiring application/json keeps a keyless loopback gateway's admin API out of
 * reach of the pages its operator visits (edge/check-content-type.ts).
 */
function deps(ctx: GatewayContext): ManageDeps {
  return { governance: ctx.governance, tiers: Object.keys(ctx.config.tiers), resolveModel: (name) => ctx.router.plan(name) };
}

function body(call: RouteCall): Promise<unknown> {
  return readJsonBody(call.req, call.ctx.config.server.body_limit_bytes);
}

/** Admin answers may hold a key shown once: no cache keeps them. */
function send(call: RouteCall, status: number, payload: unknown): void {
  sendJson(call.res, status, payload, { 'X-Request-ID': call.requestId, 'Cache-Control': 'no-store' });
}

function list(call: RouteCall, data: unknown[]): void {
  send(call, 200, { object: 'list', data });
}

/** What GET /admin/keys and /admin/endpoints read (projectFilter); any other parameter is refused (route-table.ts). */
export const PROJECT_FILTER_QUERY = ['project'] as const;

/** `?project=`: only that project's (PostgreSQL refuses NUL in text, so it is a 400 here). */
function projectFilter(call: RouteCall): string | undefined {
  const project = call.search.get('project') ?? undefined;
  if (project?.includes('\0')) throw errors.invalidRequest('project contains a NUL byte.', 'project');
  return project;
}

function issued(call: RouteCall, status: number, { key, plaintext }: IssuedKey): void {
  send(call, status, { ...keyJson(key), key: plaintext });
}

export async function handleCreateProject(call: RouteCall): Promise<void> {
  const project = projectJson(await createProject(deps(call.ctx), parseCreateProject(await body(call))));
  await recordAudit(call, { action: 'project.create', target: { type: 'project', id: project.id as string }, after: project });
  send(call, 201, project);
}

export async function handleListProjects(call: RouteCall): Promise<void> {
  const projects = await call.ctx.governance.withStore((store) => store.listProjects());
  list(call, projects.map(projectJson));
}

export async function handleCreateKey(call: RouteCall): Promise<void> {
  const created = await createKey(deps(call.ctx), parseCreateKey(await body(call)));
  await recordAudit(call, { action: 'key.create', target: { type: 'key', id: created.key.id }, after: keyJson(created.key) });
  issued(call, 201, created);
}

export async function handleListKeys(call: RouteCall): Promise<void> {
  const project = projectFilter(call);
  const keys = await call.ctx.governance.withStore((store) => store.listKeys(project));
  const now = Date.now();
  list(
    call,
    keys.map((k) => keyJson(k, now)),
  );
}

/** A key as the admin API shows it before a change, for the audit log (undefined: no such key, which the change reports). */
async function keyBefore(call: RouteCall, id: string): Promise<Record<string, unknown> | undefined> {
  const key = await call.ctx.governance.withStore((store) => store.getKey(id));
  return key && keyJson(key);
}

export async function handleRevokeKey(call: RouteCall): Promise<void> {
  await body(call);
  const id = call.params.key_id;
  const before = await keyBefore(call, id);
  const after = keyJson(await revokeKey(deps(call.ctx), id));
  await recordAudit(call, { action: 'key.revoke', target: { type: 'key', id }, before, after });
  send(call, 200, after);
}

export async function handleRotateKey(call: RouteCall): Promise<void> {
  const id = call.params.key_id;
  const input = parseRotateKey(await body(call));
  const before = await keyBefore(call, id);
  const rotated = await rotateKey(deps(call.ctx), id, input);
  await recordAudit(call, { action: 'key.rotate', target: { type: 'key', id }, before, after: keyJson(rotated.key) });
  issued(call, 200, rotated);
}

export async function handleCreateEndpoint(call: RouteCall): Promise<void> {
  const endpoint = await createEndpoint(deps(call.ctx), parseCreateEndpoint(await body(call)));
  const after = endpointJson(endpoint);
  await recordAudit(call, {
    action: 'endpoint.create',
    target: { type: 'endpoint', id: `${endpoint.projectId}/${endpoint.name}` },
    after,
  });
  send(call, 201, after);
}

export async function handleListEndpoints(call: RouteCall): Promise<void> {
  const project = projectFilter(call);
  const endpoints = await call.ctx.governance.withStore((store) => store.listEndpoints(project));
  list(call, endpoints.map(endpointJson));
}
