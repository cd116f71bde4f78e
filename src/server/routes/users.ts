import { errors } from '../../errors/catalog.ts';
import { recordAudit } from '../../governance/audit/record-audit.ts';
import { userJson } from '../../governance/users/users.ts';
import { readJsonBody } from '../../protocol/http/read-json-body.ts';
import { parseSetAccess } from '../../governance/users/user-requests.ts';
import { sendJson } from '../../protocol/http/send-json.ts';
import type { RouteCall } from '../route-table.ts';

/**
 * The console's users (docs/governance/users.md), for an owner: they are created at their first
 * sign-in through SSO; an owner lists them and sets a role, which then stays whatever the
 * identity provider's claims say.
 */
function send(call: RouteCall, status: number, payload: unknown): void {
  sendJson(call.res, status, payload, { 'X-Request-ID': call.requestId, 'Cache-Control': 'no-store' });
}

export async function handleListUsers(call: RouteCall): Promise<void> {
  const users = await call.ctx.console.users.list();
  send(call, 200, { object: 'list', data: users.map(userJson) });
}

export async function handleGetUser(call: RouteCall): Promise<void> {
  const user = await call.ctx.console.users.get(call.params.user_id);
  if (!user) throw errors.notFound('user', call.params.user_id, 'user_id');
  send(call, 200, userJson(user));
}

/** POST /admin/users/{user_id} {role, projects}: the user's role from now on, on every session it has. */
export async function handleSetUserAccess(call: RouteCall): Promise<void> {
  const input = parseSetAccess(await readJsonBody(call.req, call.ctx.config.server.body_limit_bytes));
  const projects = [...new Set(input.projects ?? [])].sort();
  const missing = await call.ctx.governance.withStore(async (store) => {
    for (const id of projects) if (!(await store.getProject(id))) return id;
    return undefined;
  });
  if (missing) throw errors.notFound('project', missing, 'projects');
  const before = await call.ctx.console.users.get(call.params.user_id);
  const after = await call.ctx.console.users.setAccess(call.params.user_id, { role: input.role, projects });
  await recordAudit(call, {
    action: 'user.set_access',
    target: { type: 'user', id: after.id },
    before: before ? userJson(before) : null,
    after: userJson(after),
  });
  send(call, 200, userJson(after));
}
