import { renderErrorBody } from '../../errors/render.ts';
import { takeMcpTools } from '../../mcp/mcp-tool-entries.ts';
import { completeWithTools, type McpForModels, openWithTools, prepareToolLoop } from '../../mcp/run-tool-loop.ts';
import { parseChatRequest } from './parse-request.ts';
import { chatToCanonical } from './to-canonical.ts';
import { completeChat } from './complete.ts';
import type { ModelOperation } from '../../pipeline/model-operation.ts';
import { streamChat } from './stream.ts';
import { type StreamChoice, streamProfileFor } from '../../pipeline/stream-settings.ts';
import { readRequestRouting } from '../../routing/request-routing.ts';
import type { CanonicalRequest } from '../../protocol/canonical/request.ts';

/** `models` is sluice's to route on (readRequestRouting): it is not passed on to an upstream. */
function withoutModels(request: CanonicalRequest): CanonicalRequest {
  if (request.extra?.models === undefined) return request;
  const { models: _models, ...extra } = request.extra;
  return { ...request, extra: Object.keys(extra).length ? extra : undefined };
}

/**
 * POST /v1/chat/completions, streamed or not, in the stream profile `choice` and the config
 * decide (stream-settings.ts). `{"type": "mcp"}` tools (sluice's extension: docs/api/mcp.md) are
 * run by sluice through `mcp`, the MCP gateway, over as many model calls as they take.
 */
export function chatCompletions(choice: StreamChoice, mcp: McpForModels): ModelOperation {
  return {
    surface: 'chat',
    renderError: renderErrorBody,
    parse(body, ctx, caller) {
      const taken = takeMcpTools(body, Object.keys(ctx.config.mcp.servers));
      const chat = parseChatRequest(taken.body);
      const routing = readRequestRouting(chat);
      const canonical = withoutModels(chatToCanonical(chat));
      const loop = prepareToolLoop(mcp, taken.entries, caller, ctx, canonical);
      const request = loop?.request ?? canonical;
      const stream = ctx.config.stream;
      const profile = streamProfileFor(stream, choice);
      const streamed = chat.stream === true;
      return {
        model: chat.model,
        fallbacks: routing.fallbacks,
        stickyKey: routing.stickyKey,
        prepare: async () => ({
          request,
          streamed,
          deadlineMs: stream.deadline_s * 1000,
          cacheable: true,
          run: (run) =>
            streamed
              ? streamChat(
                  run,
                  request,
                  {
                    timings: { heartbeatMs: stream.heartbeat_s * 1000, idleTimeoutMs: stream.idle_timeout_s * 1000 },
                    includeUsage: profile.chat.usage === 'always' || chat.stream_options?.include_usage === true,
                    usageExtensions: stream.usage_extensions,
                    choices: profile.chat,
                  },
                  loop && openWithTools(run, request, loop.setup),
                )
              : completeChat(run, request, loop && completeWithTools(run, loop.setup)),
        }),
      };
    },
  };
}
