import type { z } from 'zod';
import { errors } from '../../errors/catalog.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import { generateCallId } from '../openai-compatible/decode-chunk.ts';
import { bedrockFinishReason } from './finish-reason.ts';
import { RESPONSE_FORMAT_TOOL } from '../response-format-tool.ts';
import { checkPayload } from '../upstream-schema.ts';
import { converseResponseSchema } from './payload-schema.ts';
import { convertBedrockUsage } from './usage.ts';

type ContentBlock = z.infer<typeof converseResponseSchema>['output']['message']['content'][number];

/** A non-streaming Converse response -> the same canonical events a stream of it would give. */
export function decodeBedrockResponse(body: unknown, provider: string): CanonicalEvent[] {
  const checked = checkPayload(converseResponseSchema, body, provider, 'response');
  if (!checked.ok) return [{ type: 'error', error: checked.error }];
  const res = checked.value;
  const out: CanonicalEvent[] = [{ type: 'start' }];
  let calls = 0;
  let answered = false;
  for (const block of res.output.message.content) {
    if (block.text) out.push({ type: 'text', choice: 0, text: block.text });
    if (block.reasoningContent) pushReasoning(block.reasoningContent, out);
    const tool = block.toolUse;
    if (!tool) continue;
    if (tool.name === RESPONSE_FORMAT_TOOL) {
      // The forced tool of a JSON response format: its input is the answer (decode-events.ts).
      answered = true;
      out.push({ type: 'text', choice: 0, text: JSON.stringify(tool.input ?? {}) });
      continue;
    }
    // A call without a name cannot be answered; one without an id gets one to match its result against.
    if (!tool.name) return [{ type: 'error', error: errors.malformed(provider, 'toolUse block without a name') }];
    const index = calls++;
    out.push({ type: 'tool-call-start', choice: 0, index, id: tool.toolUseId || generateCallId(), name: tool.name });
    out.push({ type: 'tool-call-delta', choice: 0, index, arguments: JSON.stringify(tool.input ?? {}) });
  }
  const raw = res.stopReason ?? 'end_turn';
  const reason = raw === 'tool_use' && answered && calls === 0 ? 'stop' : bedrockFinishReason(raw, calls > 0);
  out.push({ type: 'finish', choice: 0, reason, rawReason: raw });
  if (res.usage) out.push({ type: 'usage', usage: convertBedrockUsage(res.usage) });
  return out;
}

/** A reasoning block: its text (with the signature that lets it be sent back) or its redacted form. */
function pushReasoning(reasoning: NonNullable<ContentBlock['reasoningContent']>, out: CanonicalEvent[]): void {
  if (reasoning.reasoningText) {
    const { text, signature } = reasoning.reasoningText;
    out.push({ type: 'reasoning', choice: 0, text: text ?? '', ...(signature ? { signature } : {}) });
  }
  if (reasoning.redactedContent) out.push({ type: 'reasoning', choice: 0, text: '', redacted: reasoning.redactedContent });
}
