import type { AssembledMessage } from '../../protocol/canonical/assemble.ts';
import { toOpenAIUsage } from '../../protocol/canonical/usage.ts';
import { chatAnnotation } from './annotations.ts';

export interface CompletionIdentity {
  id: string;
  created: number;
  model: string;
}

/** The non-streaming `chat.completion` object. */
export function encodeCompletion(message: AssembledMessage, identity: CompletionIdentity): Record<string, unknown> {
  return {
    id: identity.id,
    object: 'chat.completion',
    created: identity.created,
    model: identity.model,
    choices: message.choices.map((c) => {
      const msg: Record<string, unknown> = {
        role: 'assistant',
        content: c.text ?? (c.toolCalls.length > 0 || c.refusal !== null ? null : ''),
        refusal: c.refusal,
      };
      if (c.reasoning !== null) msg.reasoning_content = c.reasoning;
      if (c.reasoningSignature !== null) msg.reasoning_signature = c.reasoningSignature;
      if (c.toolCalls.length > 0) {
        msg.tool_calls = c.toolCalls.map((t) => ({
          id: t.id,
          type: 'function',
          function: { name: t.name, arguments: t.arguments },
        }));
      }
      if (c.annotations.length > 0) msg.annotations = c.annotations.map(chatAnnotation);
      const hasLogprobs = c.logprobs.content !== null || c.logprobs.refusal !== null;
      const choice: Record<string, unknown> = {
        index: c.index,
        message: msg,
        logprobs: hasLogprobs ? c.logprobs : null,
        finish_reason: c.finishReason ?? 'stop',
      };
      if (c.contentFilter !== null) choice.content_filter_results = c.contentFilter;
      return choice;
    }),
    usage: message.usage ? toOpenAIUsage(message.usage) : null,
    service_tier: message.start?.serviceTier ?? null,
    system_fingerprint: message.start?.systemFingerprint ?? null,
    ...(message.promptFilter !== null && { prompt_filter_results: message.promptFilter }),
  };
}
