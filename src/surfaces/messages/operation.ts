import { messagesRelayOf } from '../../providers/messages-relay-of.ts';
import { renderAnthropicError } from '../../protocol/anthropic-errors.ts';
import { parseMessagesRequest } from './parse-request.ts';
import { messagesToCanonical } from './to-canonical.ts';
import type { ModelOperation } from '../../pipeline/model-operation.ts';
import { completeMessages } from './complete.ts';
import { relayMessages } from './relay.ts';
import { streamMessages } from './stream.ts';

/**
 * The providers that honour `cache_control` when it reaches them in the canonical request
 * (Anthropic itself is relayed, with the body as sent).
 */
const HONOURS_CACHE_CONTROL = new Set(['anthropic', 'bedrock']);

/**
 * POST /v1/messages, Anthropic's Messages API over every provider. An Anthropic target gets the
 * body as sent (the model name aside) and its stream is relayed; every other target goes through
 * the canonical request and events. `beta` is the client's `anthropic-beta` header, for Anthropic.
 */
export function createMessage(beta: string | undefined): ModelOperation {
  return {
    surface: 'messages',
    renderError: renderAnthropicError,
    parse(body, ctx) {
      // Every target gets the same validation: a body Anthropic would refuse is refused here too.
      const parsed = parseMessagesRequest(body);
      const raw = body as Record<string, unknown>;
      const options = {
        streamed: parsed.stream === true,
        timings: { heartbeatMs: ctx.config.stream.heartbeat_s * 1000, idleTimeoutMs: ctx.config.stream.idle_timeout_s * 1000 },
      };
      const deadlineMs = ctx.config.stream.deadline_s * 1000;
      return {
        model: parsed.model,
        // Anthropic's `user` (a sticky route's and a key pool's affinity, as chat's `user` is).
        stickyKey: parsed.metadata?.user_id || undefined,
        async prepare(target) {
          if (messagesRelayOf(target.adapter, target.model)) {
            // What the accountant counts when the upstream reports no usage (everything it can read).
            const request = messagesToCanonical(parsed, { dropParams: true, keepCacheControl: false });
            return {
              request,
              streamed: options.streamed,
              deadlineMs,
              run: (run) => relayMessages(run, raw, beta, options),
            };
          }
          const request = messagesToCanonical(parsed, {
            dropParams: ctx.config.providers[target.provider]?.drop_params === true,
            keepCacheControl: HONOURS_CACHE_CONTROL.has(target.provider),
          });
          return {
            request,
            streamed: options.streamed,
            deadlineMs,
            cacheable: true,
            run: (run) => (options.streamed ? streamMessages(run, request, options) : completeMessages(run, request)),
          };
        },
      };
    },
  };
}
