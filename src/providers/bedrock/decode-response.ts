import { errors } from '../../errors/catalog.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import { bedrockFinishReason } from './finish-reason.ts';
import { type BedrockUsage, convertBedrockUsage } from './usage.ts';

/** A Converse response, only the fields sluice reads. */
interface ConverseResponse {
  output?: { message?: { content?: ContentBlock[] } };
  stopReason?: string;
  usage?: BedrockUsage;
}
interface ContentBlock {
  text?: string;
  toolUse?: { toolUseId?: string; name?: string; input?: unknown };
  reasoningContent?: { reasoningText?: { text?: string; signature?: string }; redactedContent?: string };
}

/** A non-streaming Converse response -> the same canonical events a stream of it would give. */
export function decodeBedrockResponse(body: unknown, provider: string): CanonicalEvent[] {
  const res = (body ?? {}) as ConverseResponse;
  const content = res.output?.message?.content;
  if (!Array.isArray(content)) {
    return [{ type: 'error', error: errors.malformed(provider, 'response has no output.message.content') }];
  }
  const out: CanonicalEvent[] = [{ type: 'start' }];
  let calls = 0;
  for (const block of content) {
    if (block.text) out.push({ type: 'text', choice: 0, text: block.text });
    const reasoning = block.reasoningContent;
    if (reasoning?.reasoningText) {
      const { text, signature } = reasoning.reasoningText;
      out.push({ type: 'reasoning', choice: 0, text: text ?? '', ...(signature ? { signature } : {}) });
    }
    if (reasoning?.redactedContent) out.push({ type: 'reasoning', choice: 0, text: '', redacted: reasoning.redactedContent });
    if (block.toolUse) {
      const { toolUseId, name, input } = block.toolUse;
      const index = calls++;
      out.push({ type: 'tool-call-start', choice: 0, index, id: toolUseId ?? '', name: name ?? '' });
      out.push({ type: 'tool-call-delta', choice: 0, index, arguments: JSON.stringify(input ?? {}) });
    }
  }
  const raw = res.stopReason ?? 'end_turn';
  out.push({ type: 'finish', choice: 0, reason: bedrockFinishReason(raw, calls > 0), rawReason: raw });
  if (res.usage && typeof res.usage === 'object') out.push({ type: 'usage', usage: convertBedrockUsage(res.usage) });
  return out;
}
