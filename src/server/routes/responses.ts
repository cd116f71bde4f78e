import type { ServerResponse } from 'node:http';
import { errors } from '../../errors/catalog.ts';
import { responsesScope } from '../../governance/keys/project-scope.ts';
import type { Caller } from '../../admission/admission.ts';
import { sendJson } from '../../protocol/http/send-json.ts';
import type { GatewayContext } from '../gateway-context.ts';

/**
 * GET /v1/responses/{id}: a response created (or relayed) through sluice and stored; a project
 * key reads its project's only (another's is a 404, like an unknown id).
 */
export async function handleGetResponse(
  res: ServerResponse,
  ctx: GatewayContext,
  id: string,
  requestId: string,
  caller: Caller | null,
) {
  if (!caller) throw new Error('GET /v1/responses/{id} without an authenticated caller');
  const stored = await ctx.responsesStore?.scoped(responsesScope(caller)).get(id);
  if (!stored) throw errors.responseNotFound(id);
  sendJson(res, 200, stored.response, { 'X-Request-ID': requestId });
}
