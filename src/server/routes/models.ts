import type { ServerResponse } from 'node:http';
import type { GatewayContext } from '../gateway-context.ts';
import { sendJson } from '../../protocol/http/send-json.ts';

/** GET /v1/models: aliases and the models providers list, in the OpenAI list shape. */
export function handleListModels(res: ServerResponse, ctx: GatewayContext, requestId: string): void {
  const data = ctx.registry.models().map((m) => ({ id: m.id, object: 'model', created: ctx.startedAt, owned_by: m.owned_by }));
  sendJson(res, 200, { object: 'list', data }, { 'X-Request-ID': requestId });
}
