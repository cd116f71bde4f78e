import { errors } from '../../errors/catalog.ts';
import { recordAudit } from '../../governance/audit/record-audit.ts';
import { endpointJson, keyJson, projectJson } from '../../governance/keys/admin-json.ts';
import {
  parseCreateEndpoint,
  parseCreateKey,
  parseCreateProject,
  parseRotateKey,
  parseUpdateEndpoint,
  parseUpdateKey,
  parseUpdateProject,
} from '../../governance/keys/admin-requests.ts';
import { deleteEndpoint, updateEndpoint } from '../../governance/keys/edit-endpoints.ts';
import { deleteKey, updateKey } from '../../governance/keys/edit-keys.ts';
import { deleteProject, updateProject } from '../../governance/keys/edit-projects.ts';
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
import { checkKeyChange, checkNewKey, visibleTo } from './admin-scope.ts';

/**
 * The admin API (routes with auth `admin`: the master key or an admin key). Every POST and PATCH
 * reads a JSON body, `{}` at least: a bodyless POST is what a web page can send cross-site
 * without a preflight, so requiring application/json keeps a keyless loopback gateway's admin API
 * out of reach of the pages its operator visits (edge/check-content-type.ts). A DELETE needs no
 * body: browsers preflight it whatever it carries.
 *
 * Each mutation has its target's `before` and `after` at hand in one place (the governance
 * function's result), where one audit record per handler can be written.
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

/** What GET /admin/keys reads (projectFilter, includeDeleted); any other parameter is refused (route-table.ts). */
export const KEYS_QUERY = ['project', 'include_deleted'] as const;
/** What GET /admin/endpoints reads. */
export const ENDPOINTS_QUERY = ['project'] as const;
/** What GET /admin/projects reads. */
export const PROJECTS_QUERY = ['include_deleted'] as const;
/** What DELETE /admin/projects/{project} reads. */
export const DELETE_PROJECT_QUERY = ['force'] as const;

/** `?project=`: only that project's (PostgreSQL refuses NUL in text, so it is a 400 here). */
function projectFilter(call: RouteCall): string | undefined {
  const project = call.search.get('project') ?? undefined;
  if (project?.includes('\0')) throw errors.invalidRequest('project contains a NUL byte.', 'project');
  return project;
}

/** A boolean query parameter: `true` or `false` (absent: false); anything else is a 400 naming it. */
function flag(call: RouteCall, name: string): boolean {
  const value = call.search.get(name);
  if (value === null || value === 'false') return false;
  if (value === 'true') return true;
  throw errors.invalidRequest(`${name} must be true or false, not "${value}".`, name);
}

function issued(call: RouteCall, status: number, { key, plaintext }: IssuedKey): void {
  send(call, status, { ...keyJson(key), key: plaintext });
}

/** The audit target of a project, a key, an endpoint. */
const projectTarget = (id: string) => ({ type: 'project', id });
const keyTarget = (id: string) => ({ type: 'key', id });
const endpointTarget = (project: string, name: string) => ({ type: 'endpoint', id: `${project}/${name}` });

export async function handleCreateProject(call: RouteCall): Promise<void> {
  const after = projectJson(await createProject(deps(call.ctx), parseCreateProject(await body(call))));
  await recordAudit(call, { action: 'project.create', target: projectTarget(after.id as string), after });
  send(call, 201, after);
}

export async function handleListProjects(call: RouteCall): Promise<void> {
  const includeDeleted = flag(call, 'include_deleted');
  const projects = await call.ctx.governance.withStore((store) => store.listProjects(includeDeleted));
  list(call, visibleTo(call.caller, projects, (p) => p.id).map(projectJson));
}

export async function handleUpdateProject(call: RouteCall): Promise<void> {
  const { before, after } = await updateProject(deps(call.ctx), call.params.project, parseUpdateProject(await body(call)));
  await recordAudit(call, {
    action: 'project.update',
    target: projectTarget(after.id),
    before: projectJson(before),
    after: projectJson(after),
  });
  send(call, 200, projectJson(after));
}

/** 409 project_has_keys while it has live keys, unless ?force=true deletes them with it. */
export async function handleDeleteProject(call: RouteCall): Promise<void> {
  const { before, after, deletedKeys } = await deleteProject(deps(call.ctx), call.params.project, flag(call, 'force'));
  const answer = { ...projectJson(after), deleted_keys: deletedKeys };
  await recordAudit(call, {
    action: 'project.delete',
    target: projectTarget(after.id),
    before: projectJson(before),
    after: answer,
  });
  send(call, 200, answer);
}

export async function handleCreateKey(call: RouteCall): Promise<void> {
  const input = parseCreateKey(await body(call));
  checkNewKey(call.caller, input.project, input.admin);
  const created = await createKey(deps(call.ctx), input);
  await recordAudit(call, { action: 'key.create', target: keyTarget(created.key.id), after: keyJson(created.key) });
  issued(call, 201, created);
}

export async function handleListKeys(call: RouteCall): Promise<void> {
  const project = projectFilter(call);
  const includeDeleted = flag(call, 'include_deleted');
  const keys = await call.ctx.governance.withStore((store) => store.listKeys(project, includeDeleted));
  const now = Date.now();
  list(
    call,
    visibleTo(call.caller, keys, (k) => k.projectId).map((k) => keyJson(k, now)),
  );
}

export async function handleRevokeKey(call: RouteCall): Promise<void> {
  await body(call);
  await checkKeyChange(call.caller, call.ctx.governance, call.params.key_id);
  const { before, after } = await revokeKey(deps(call.ctx), call.params.key_id);
  await recordAudit(call, { action: 'key.revoke', target: keyTarget(after.id), before: keyJson(before), after: keyJson(after) });
  send(call, 200, keyJson(after));
}

export async function handleRotateKey(call: RouteCall): Promise<void> {
  const input = parseRotateKey(await body(call));
  await checkKeyChange(call.caller, call.ctx.governance, call.params.key_id);
  const rotated = await rotateKey(deps(call.ctx), call.params.key_id, input);
  const { before, key } = rotated;
  await recordAudit(call, { action: 'key.rotate', target: keyTarget(key.id), before: keyJson(before), after: keyJson(key) });
  issued(call, 200, rotated);
}

export async function handleUpdateKey(call: RouteCall): Promise<void> {
  const input = parseUpdateKey(await body(call));
  await checkKeyChange(call.caller, call.ctx.governance, call.params.key_id);
  const { before, after } = await updateKey(deps(call.ctx), call.params.key_id, input);
  await recordAudit(call, { action: 'key.update', target: keyTarget(after.id), before: keyJson(before), after: keyJson(after) });
  send(call, 200, keyJson(after));
}

export async function handleDeleteKey(call: RouteCall): Promise<void> {
  await checkKeyChange(call.caller, call.ctx.governance, call.params.key_id);
  const { before, after } = await deleteKey(deps(call.ctx), call.params.key_id);
  await recordAudit(call, { action: 'key.delete', target: keyTarget(after.id), before: keyJson(before), after: keyJson(after) });
  send(call, 200, keyJson(after));
}

export async function handleCreateEndpoint(call: RouteCall): Promise<void> {
  const endpoint = await createEndpoint(deps(call.ctx), parseCreateEndpoint(await body(call)));
  await recordAudit(call, {
    action: 'endpoint.create',
    target: endpointTarget(endpoint.projectId, endpoint.name),
    after: endpointJson(endpoint),
  });
  send(call, 201, endpointJson(endpoint));
}

export async function handleListEndpoints(call: RouteCall): Promise<void> {
  const project = projectFilter(call);
  const endpoints = await call.ctx.governance.withStore((store) => store.listEndpoints(project));
  list(call, visibleTo(call.caller, endpoints, (e) => e.projectId).map(endpointJson));
}

export async function handleUpdateEndpoint(call: RouteCall): Promise<void> {
  const { project, endpoint } = call.params;
  const { before, after } = await updateEndpoint(deps(call.ctx), project, endpoint, parseUpdateEndpoint(await body(call)));
  const target = endpointTarget(project, endpoint);
  await recordAudit(call, { action: 'endpoint.update', target, before: endpointJson(before), after: endpointJson(after) });
  send(call, 200, endpointJson(after));
}

/** Answers with the endpoint as it was, `deleted: true`: nothing of it is kept. */
export async function handleDeleteEndpoint(call: RouteCall): Promise<void> {
  const { project, endpoint } = call.params;
  const { before } = await deleteEndpoint(deps(call.ctx), project, endpoint);
  await recordAudit(call, { action: 'endpoint.delete', target: endpointTarget(project, endpoint), before: endpointJson(before) });
  send(call, 200, { ...endpointJson(before), deleted: true });
}
