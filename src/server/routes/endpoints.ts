import type { GatewayError } from '../../errors/gateway-error.ts';
import type { Endpoint } from '../../governance/keys/governance-store.ts';
import { endpointContext, withEndpointModel } from '../../pipeline/endpoint-context.ts';
import { createExchange } from '../../pipeline/exchange.ts';
import { STREAM_PROFILES } from '../../protocol/stream-profiles.ts';
import { handleModelRequest } from '../../pipeline/handle-model-request.ts';
import type { ModelOperation } from '../../pipeline/model-operation.ts';
import { readJsonBody } from '../../protocol/http/read-json-body.ts';
import { readMultipartBody } from '../../protocol/http/read-multipart-body.ts';
import type { RouteCall } from '../route-table.ts';
import { resumable } from './streams.ts';

/**
 * A model route of a project's endpoint, `/{project}/{endpoint}/v1/...`: the same lifecycle as
 * `/v1/...`, on the endpoint's view of the context (governance/endpoints/endpoint-context.ts)
 * and with the operation built from the endpoint's settings. `apiPrefix`: the route is the
 * endpoint's `/api/v1/...`, which only an endpoint whose stream profile serves that base path has
 * (the accounting reference's); for any other it is the same 404 as a missing endpoint, after the
 * key check, so that it tells nothing of which endpoints exist.
 */
export function endpointModelRoute(
  operation: (call: RouteCall, endpoint: Endpoint | undefined) => ModelOperation,
  statusOf?: (error: GatewayError) => number,
  apiPrefix = false,
  read: BodyReader = readJson,
) {
  return async (call: RouteCall) => {
    const { project, endpoint: name } = call.params;
    const found = await call.ctx.governance.endpoint(project, name);
    const profile = found?.streamProfile ?? call.ctx.config.stream.profile;
    const endpoint = apiPrefix && !STREAM_PROFILES[profile].apiPrefix ? undefined : found;
    const op = operation(call, endpoint);
    const exchange = { ...createExchange(call.res, call.requestId, op.renderError, statusOf), resume: resumable(call) };
    const readBody = async () => withEndpointModel(await read(call), endpoint);
    return handleModelRequest(exchange, call.req, readBody, op, endpointContext(call.ctx, project, name, endpoint));
  };
}

/** How a model route reads its body: JSON (most), or a multipart upload (audio, image edits). */
export type BodyReader = (call: RouteCall) => Promise<unknown>;

/** A JSON body, within server.body_limit_bytes. */
export const readJson: BodyReader = (call) => readJsonBody(call.req, call.ctx.config.server.body_limit_bytes);

/** A multipart upload, within server.upload_limit_bytes. */
export const readUpload: BodyReader = (call) => readMultipartBody(call.req, call.ctx.config.server.upload_limit_bytes);
