import { errors } from '../../errors/catalog.ts';
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
import { checkKeyChange, checkNewKey, visibleTo } from './admin-scope.ts';

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
  send(call, 201, projectJson(await createProject(deps(call.ctx), parseCreateProject(await body(call)))));
}

export async function handleListProjects(call: RouteCall): Promise<void> {
  const projects = await call.ctx.governance.withStore((store) => store.listProjects());
  list(call, visibleTo(call.caller, projects, (p) => p.id).map(projectJson));
}

export async function handleCreateKey(call: RouteCall): Promise<void> {
  const input = parseCreateKey(await body(call));
  checkNewKey(call.caller, input.project, input.admin);
  issued(call, 201, await createKey(deps(call.ctx), input));
}

export async function handleListKeys(call: RouteCall): Promise<void> {
  const project = projectFilter(call);
  const keys = await call.ctx.governance.withStore((store) => store.listKeys(project));
  const now = Date.now();
  list(
    call,
    visibleTo(call.caller, keys, (k) => k.projectId).map((k) => keyJson(k, now)),
  );
}

export async function handleRevokeKey(call: RouteCall): Promise<void> {
  await body(call);
  await checkKeyChange(call.caller, call.ctx.governance, call.params.key_id);
  send(call, 200, keyJson(await revokeKey(deps(call.ctx), call.params.key_id)));
}

export async function handleRotateKey(call: RouteCall): Promise<void> {
  const input = parseRotateKey(await body(call));
  await checkKeyChange(call.caller, call.ctx.governance, call.params.key_id);
  issued(call, 200, await rotateKey(deps(call.ctx), call.params.key_id, input));
}

export async function handleCreateEndpoint(call: RouteCall): Promise<void> {
  send(call, 201, endpointJson(await createEndpoint(deps(call.ctx), parseCreateEndpoint(await body(call)))));
}

export async function handleListEndpoints(call: RouteCall): Promise<void> {
  const project = projectFilter(call);
  const endpoints = await call.ctx.governance.withStore((store) => store.listEndpoints(project));
  list(call, visibleTo(call.caller, endpoints, (e) => e.projectId).map(endpointJson));
}
