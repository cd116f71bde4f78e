import type { ServerResponse } from 'node:http';
import type { GatewayContext } from '../gateway-context.ts';
import { sendJson } from '../../protocol/http/send-json.ts';

/**
 * GET /v1/models: aliases and every enabled provider's models as `provider/model`, in the OpenAI
 * list shape. Upstreams that are down or slow leave their static models (registry.models()).
 */
export async function handleListModels(res: ServerResponse, ctx: GatewayContext, requestId: string): Promise<void> {
  const models = await ctx.registry.models();
  const data = models.map((m) => ({ id: m.id, object: 'model', created: ctx.startedAt, owned_by: m.owned_by }));
  sendJson(res, 200, { object: 'list', data }, { 'X-Request-ID': requestId });
}
