import { endpointContext, withEndpointModel } from '../../pipeline/endpoint-context.ts';
import { handleCountTokens } from '../../surfaces/messages/count-tokens.ts';
import { readJsonBody } from '../../protocol/http/read-json-body.ts';
import type { RouteCall } from '../route-table.ts';

/** POST /v1/messages/count_tokens. */
export function countTokensRoute({ req, res, requestId, ctx }: RouteCall): Promise<void> {
  return handleCountTokens(req, res, requestId, () => readJsonBody(req, ctx.config.server.body_limit_bytes), ctx);
}

/**
 * POST /{project}/{endpoint}/v1/messages/count_tokens: counted as the endpoint's /v1/messages would
 * run (a body without a model, or with a bare id, means the endpoint's model).
 */
export async function endpointCountTokensRoute(call: RouteCall): Promise<void> {
  const { project, endpoint: name } = call.params;
  const endpoint = await call.ctx.governance.endpoint(project, name);
  const readBody = async () => withEndpointModel(await readJsonBody(call.req, call.ctx.config.server.body_limit_bytes), endpoint);
  return handleCountTokens(call.req, call.res, call.requestId, readBody, endpointContext(call.ctx, project, name, endpoint));
}
