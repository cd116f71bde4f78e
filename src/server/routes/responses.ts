import type { ServerResponse } from 'node:http';
import { errors } from '../../errors/catalog.ts';
import { sendJson } from '../../protocol/http/send-json.ts';
import type { GatewayContext } from '../gateway-context.ts';

/** GET /v1/responses/{id}: a response created (or relayed) through sluice and stored. */
export async function handleGetResponse(res: ServerResponse, ctx: GatewayContext, id: string, requestId: string) {
  const stored = await ctx.responsesStore?.get(id);
  if (!stored) throw errors.responseNotFound(id);
  sendJson(res, 200, stored.response, { 'X-Request-ID': requestId });
}
