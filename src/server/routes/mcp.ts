import { errors } from '../../errors/catalog.ts';
import type { RouteCall } from '../route-table.ts';

/**
 * `/mcp`, and `/{project}/{endpoint}/mcp` (docs/api/mcp.md): the caller's key was checked
 * before the handler, like every `key` route's. At an endpoint, the key must be of the endpoint's
 * project (the master key and admin keys reach every project), else the 404 of a missing endpoint.
 */
export async function handleMcp(call: RouteCall): Promise<void> {
  const { ctx, req, res } = call;
  const caller = call.caller;
  if (!caller) throw errors.routeNotFound(req.method ?? 'POST', (req.url ?? '').split('?')[0]);
  let endpoint: string | null = null;
  if (call.params.project !== undefined) {
    const { project, endpoint: name } = call.params;
    const found = await ctx.governance.endpoint(project, name);
    if (!found || (!caller.admin && caller.projectId !== found.projectId)) throw errors.endpointNotFound(project, name);
    endpoint = name;
  }
  await ctx.mcp.handle({
    req,
    res,
    caller,
    place: { endpoint },
    config: ctx.config.mcp,
    bodyLimit: ctx.config.server.body_limit_bytes,
    storeContentChars: ctx.accounting.storeContentChars,
  });
}
