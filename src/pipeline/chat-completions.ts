import type { Config } from '../config/schema.ts';
import { renderErrorBody } from '../errors/render.ts';
import { parseChatRequest } from '../protocol/openai-chat/parse-request.ts';
import { chatToCanonical } from '../protocol/openai-chat/to-canonical.ts';
import { completeChat } from './complete-chat.ts';
import type { ModelOperation } from './model-operation.ts';
import { streamChat } from './stream-chat.ts';
import { readRequestRouting } from '../routing/request-routing.ts';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';

/** `models` is sluice's to route on (readRequestRouting): it is not passed on to an upstream. */
function withoutModels(request: CanonicalRequest): CanonicalRequest {
  if (request.extra?.models === undefined) return request;
  const { models: _models, ...extra } = request.extra;
  return { ...request, extra: Object.keys(extra).length ? extra : undefined };
}

/** Stream settings a project's endpoint sets in place of the config's `stream` section. */
export type StreamOverrides = Partial<Pick<Config['stream'], 'profile' | 'usage' | 'error_style' | 'vendor_events'>>;

/**
 * POST /v1/chat/completions, streamed or not. `profile` comes from the X-Sluice-Profile header and
 * wins over `overrides` (an endpoint's settings), which win over the config.
 */
export function chatCompletions(profile: 'openai' | 'accounting' | undefined, overrides: StreamOverrides = {}): ModelOperation {
  return {
    surface: 'chat',
    renderError: renderErrorBody,
    parse(body, ctx) {
      const chat = parseChatRequest(body);
      const routing = readRequestRouting(chat);
      const request = withoutModels(chatToCanonical(chat));
      const stream = { ...ctx.config.stream, ...overrides };
      const streamed = chat.stream === true;
      return {
        model: chat.model,
        fallbacks: routing.fallbacks,
        stickyKey: routing.stickyKey,
        prepare: async () => ({
          request,
          streamed,
          deadlineMs: stream.deadline_s * 1000,
          run: (run) =>
            streamed
              ? streamChat(run, request, {
                  timings: { heartbeatMs: stream.heartbeat_s * 1000, idleTimeoutMs: stream.idle_timeout_s * 1000 },
                  includeUsage: stream.usage === 'always' || chat.stream_options?.include_usage === true,
                  errorStyle: stream.error_style,
                  profile: profile ?? stream.profile,
                  usageExtensions: stream.usage_extensions,
                  vendorEvents: stream.vendor_events,
                })
              : completeChat(run, request),
        }),
      };
    },
  };
}
