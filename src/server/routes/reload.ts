import { errors } from '../../errors/catalog.ts';
import { recordAudit } from '../../governance/audit/record-audit.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import { readJsonBody } from '../../protocol/http/read-json-body.ts';
import { sendJson } from '../../protocol/http/send-json.ts';
import type { RouteCall } from '../route-table.ts';
import { reloadAnswer } from './reload-answer.ts';

/**
 * POST /admin/reload (docs/operations/reload.md): the config read again, as SIGHUP does, in every
 * worker of `sluice serve --workers N`. A JSON body like every admin POST (a page cannot send one
 * cross-site without a preflight): `{}`, as the reload takes no parameter; one sent is refused
 * rather than ignored (a `file` would not be read).
 */
export async function handleReload(call: RouteCall): Promise<void> {
  const body = await readJsonBody(call.req, call.ctx.config.server.body_limit_bytes);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw errors.invalidRequest('POST /admin/reload takes a JSON object: {}.');
  }
  const [unknown] = Object.keys(body);
  if (unknown !== undefined) {
    throw errors.invalidRequest(
      `POST /admin/reload takes no parameter: '${unknown}' (it reads the file the gateway started with).`,
      unknown,
    );
  }
  const reload = call.ctx.reloadConfig;
  if (!reload) throw errors.routeNotFound('POST', '/admin/reload');
  const answer = reloadAnswer(await reload());
  if (answer instanceof GatewayError) throw answer;
  // The names of the keys that changed, never their values (the config holds provider keys).
  const after = { changed: answer.changed, restart_required: answer.restart_required };
  await recordAudit(call, { action: 'config.reload', target: { type: 'config', id: null }, after });
  sendJson(call.res, 200, answer, { 'X-Request-ID': call.requestId, 'Cache-Control': 'no-store' });
}
