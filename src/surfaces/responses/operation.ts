import { errors } from '../../errors/catalog.ts';
import { takeMcpTools } from '../../mcp/mcp-tool-entries.ts';
import { completeWithTools, type McpForModels, openWithTools, prepareToolLoop } from '../../mcp/run-tool-loop.ts';
import { renderErrorBody } from '../../errors/render.ts';
import type { CanonicalMessage } from '../../protocol/canonical/request.ts';
import { parseResponsesRequest } from './parse-request.ts';
import { responsesToCanonical } from './to-canonical.ts';
import { refuseUnhonoured } from './unhonoured.ts';
import type { ResponsesStore } from '../../store/responses-store.ts';
import { responsesInput } from '../../telemetry/genai-messages.ts';
import type { ModelOperation } from '../../pipeline/model-operation.ts';
import { idRecorder, refuseForeignIds } from './relayed-ids.ts';
import { completeResponse } from './complete.ts';
import { relayResponses } from './relay.ts';
import { streamResponse } from './stream.ts';
import { readRequestRouting } from '../../routing/request-routing.ts';
import { type StreamChoice, streamProfileFor } from '../../pipeline/stream-settings.ts';

/**
 * POST /v1/responses. An upstream with its own Responses API gets the body as sent (hosted tools
 * included); every other target goes through the canonical request and events, streamed in the
 * stream profile `choice` and the config decide (stream-settings.ts).
 */
export const createResponse = (choice: StreamChoice, mcp: McpForModels): ModelOperation => ({
  surface: 'responses',
  renderError: renderErrorBody,
  parse(body, ctx, caller) {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw errors.invalidRequest('The request body must be a JSON object.');
    }
    // `{"type": "mcp"}` tools naming sluice's servers are sluice's to run (docs/api/mcp.md).
    const taken = takeMcpTools(body, Object.keys(ctx.config.mcp.servers));
    const raw = taken.body as Record<string, unknown>;
    // The model is read first: whether the body is parsed here or relayed depends on its target.
    const model = typeof raw.model === 'string' && raw.model ? raw.model : parseResponsesRequest(raw).model;
    // Saved under the caller's project, and continued from that project's responses only (the
    // master key and admin keys read every project's: governance/keys/project-scope.ts).
    const responses = ctx.responsesStore?.scoped({ projectId: caller.projectId, readsAll: caller.admin });
    const options = {
      timings: { heartbeatMs: ctx.config.stream.heartbeat_s * 1000, idleTimeoutMs: ctx.config.stream.idle_timeout_s * 1000 },
      store: raw.store === false ? undefined : responses,
      // Recorded whatever `store` says: only ids, so that the project can name its own items again.
      recordIds: idRecorder(caller, ctx.relayedIds, ctx.accounting.log),
      choices: streamProfileFor(ctx.config.stream, choice).responses,
      mcpTools: taken.entries,
    };
    const deadlineMs = ctx.config.responses.deadline_s * 1000;
    const routing = readRequestRouting(raw);
    return {
      model,
      fallbacks: routing.fallbacks,
      stickyKey: routing.stickyKey,
      async prepare(target) {
        // An upstream's own Responses API could not reach sluice's MCP servers: such a request is translated.
        if (target.adapter.responses && taken.entries.length === 0) {
          if (!Array.isArray(raw.input) && typeof raw.input !== 'string') {
            throw errors.invalidRequest("Missing required parameter: 'input'.", 'input');
          }
          // Before anything goes upstream: the ids the body names must be the caller's project's.
          await refuseForeignIds(raw, caller, ctx.relayedIds);
          // What the accountant counts when the upstream reports no usage, and the budget reserves.
          const request = {
            model,
            messages: [{ role: 'user' as const, content: JSON.stringify(raw.input) }],
            max_completion_tokens: typeof raw.max_output_tokens === 'number' ? raw.max_output_tokens : undefined,
          };
          return {
            request,
            streamed: raw.stream === true,
            deadlineMs,
            traceInput: () => responsesInput(raw),
            run: (run) => relayResponses(run, withoutModels(raw), options),
          };
        }
        const parsed = parseResponsesRequest(raw);
        refuseUnhonoured(parsed, target.provider, ctx.config.providers[target.provider]?.drop_params === true);
        const history = parsed.previous_response_id ? await loadHistory(responses, parsed.previous_response_id) : [];
        const canonical = responsesToCanonical(parsed, history);
        const loop = prepareToolLoop(mcp, taken.entries, caller, ctx, canonical);
        const request = loop?.request ?? canonical;
        return {
          request,
          streamed: parsed.stream === true,
          deadlineMs,
          cacheable: true,
          run: (run) =>
            parsed.stream
              ? streamResponse(run, parsed, request, options, loop && openWithTools(run, request, loop.setup))
              : completeResponse(run, parsed, request, options, loop && completeWithTools(run, loop.setup)),
        };
      },
    };
  },
});

/**
 * A relayed request falls back only to targets relayed the same way (relay.ts), and
 * `models` is sluice's, not the upstream's.
 */
function withoutModels(raw: Record<string, unknown>): Record<string, unknown> {
  if (raw.models === undefined) return raw;
  const { models: _models, ...rest } = raw;
  return rest;
}

async function loadHistory(responses: ResponsesStore | undefined, id: string): Promise<CanonicalMessage[]> {
  const stored = await responses?.get(id);
  if (!stored) throw errors.responseNotFound(id, 'previous_response_id');
  return stored.conversation;
}
