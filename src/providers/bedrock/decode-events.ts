import type { z } from 'zod';
import { errors } from '../../errors/catalog.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import { generateCallId } from '../openai-compatible/decode-chunk.ts';
import { RESPONSE_FORMAT_TOOL } from '../response-format-tool.ts';
import { checkPayload } from '../upstream-schema.ts';
import { bedrockFinishReason } from './finish-reason.ts';
import { bedrockStreamException } from './map-error.ts';
import { blockDeltaSchema, blockStartSchema, blockStopSchema, messageStopSchema, metadataSchema } from './payload-schema.ts';
import { convertBedrockUsage } from './usage.ts';

/** One decoded ConverseStream event (`:event-type` + JSON payload) at a time -> canonical events. */
export interface ConverseEventDecoder {
  /** Returns true when the event failed the stream (an error event was emitted: ignore the rest). */
  event(type: string, payload: unknown, out: CanonicalEvent[]): boolean;
  /** An exception message: the stream is over. */
  exception(type: string, payload: unknown, out: CanonicalEvent[]): void;
}

interface ToolBlock {
  index: number;
  sawInput: boolean;
  /** The forced tool of a JSON response format: its input is the message content. */
  answer: boolean;
}

/**
 * Content blocks carry their own `contentBlockIndex`; tool calls get dense indexes in the order
 * their `contentBlockStart` arrives. Text and reasoning blocks have no start event (see
 * fixtures/bedrock/converse-reasoning-claude-sonnet4.b64), only deltas. The tool sluice forces
 * for a JSON response format (RESPONSE_FORMAT_TOOL) is no call: its input streams as text, and the
 * turn it ends finishes with `stop`, as an OpenAI JSON answer does.
 */
export function createConverseEventDecoder(provider: string): ConverseEventDecoder {
  let started = false;
  let finished = false;
  let nextToolIndex = 0;
  let answered = false;
  const tools = new Map<number, ToolBlock>();
  const toolInput = (block: ToolBlock, json: string): CanonicalEvent =>
    block.answer
      ? { type: 'text', choice: 0, text: json }
      : { type: 'tool-call-delta', choice: 0, index: block.index, arguments: json };

  const start = (out: CanonicalEvent[]) => {
    if (started) return;
    started = true;
    out.push({ type: 'start' });
  };

  /** The payload checked against its schema; undefined (and an error event) when it does not fit. */
  function check<T>(schema: z.ZodType<T>, type: string, payload: unknown, out: CanonicalEvent[]): T | undefined {
    const checked = checkPayload(schema, payload ?? {}, provider, `${type} event`);
    if (checked.ok) return checked.value;
    out.push({ type: 'error', error: checked.error });
    return undefined;
  }

  const delta = (p: z.infer<typeof blockDeltaSchema>, out: CanonicalEvent[]): boolean => {
    const d = p.delta;
    if (!d) return false;
    if (d.text) out.push({ type: 'text', choice: 0, text: d.text });
    const r = d.reasoningContent;
    if (r?.text) out.push({ type: 'reasoning', choice: 0, text: r.text });
    if (r?.signature) out.push({ type: 'reasoning', choice: 0, text: '', signature: r.signature });
    if (r?.redactedContent) out.push({ type: 'reasoning', choice: 0, text: '', redacted: r.redactedContent });
    if (d.toolUse) {
      const block = tools.get(p.contentBlockIndex ?? -1);
      if (!block) {
        out.push({ type: 'error', error: errors.malformed(provider, 'toolUse delta for a block that never started') });
        return true;
      }
      const input = d.toolUse.input;
      if (input) {
        block.sawInput = true;
        out.push(toolInput(block, input));
      }
    }
    return false;
  };

  /** A tool_use block opens a call (or the forced answer); text and reasoning blocks have no start. */
  const blockStart = (type: string, payload: unknown, out: CanonicalEvent[]): boolean => {
    const s = check(blockStartSchema, type, payload, out);
    if (!s) return true;
    start(out);
    const tool = s.start?.toolUse;
    if (!tool) return false;
    if (tool.name === RESPONSE_FORMAT_TOOL) {
      answered = true;
      tools.set(s.contentBlockIndex ?? -1, { index: -1, sawInput: false, answer: true });
      return false;
    }
    // A call without a name cannot be answered; one without an id gets one to match its result against.
    if (!tool.name) {
      out.push({ type: 'error', error: errors.malformed(provider, 'toolUse block without a name') });
      return true;
    }
    const block = { index: nextToolIndex++, sawInput: false, answer: false };
    tools.set(s.contentBlockIndex ?? -1, block);
    out.push({
      type: 'tool-call-start',
      choice: 0,
      index: block.index,
      id: tool.toolUseId || generateCallId(),
      name: tool.name,
    });
    return false;
  };

  const blockStop = (type: string, payload: unknown, out: CanonicalEvent[]): boolean => {
    const p = check(blockStopSchema, type, payload, out);
    if (!p) return true;
    const block = tools.get(p.contentBlockIndex ?? -1);
    // A call without arguments streams no input at all; clients parse the arguments.
    if (block && !block.sawInput) out.push(toolInput(block, '{}'));
    return false;
  };

  const messageStop = (type: string, payload: unknown, out: CanonicalEvent[]): boolean => {
    const p = check(messageStopSchema, type, payload, out);
    if (!p) return true;
    if (finished) return false;
    finished = true;
    start(out);
    const raw = p.stopReason ?? 'end_turn';
    const reason = raw === 'tool_use' && answered && nextToolIndex === 0 ? 'stop' : bedrockFinishReason(raw, nextToolIndex > 0);
    out.push({ type: 'finish', choice: 0, reason, rawReason: raw });
    return false;
  };

  return {
    event(type, payload, out) {
      switch (type) {
        case 'messageStart':
          start(out);
          return false;
        case 'contentBlockStart':
          return blockStart(type, payload, out);
        case 'contentBlockDelta': {
          const p = check(blockDeltaSchema, type, payload, out);
          if (!p) return true;
          start(out);
          return delta(p, out);
        }
        case 'contentBlockStop':
          return blockStop(type, payload, out);
        case 'messageStop':
          return messageStop(type, payload, out);
        case 'metadata': {
          const p = check(metadataSchema, type, payload, out);
          if (!p) return true;
          if (p.usage) out.push({ type: 'usage', usage: convertBedrockUsage(p.usage) });
          return false;
        }
        // Anything newer (citations, guardrail traces…) is ignored: lenient upstream.
        default:
          return false;
      }
    },
    exception(type, payload, out) {
      out.push({ type: 'error', error: bedrockStreamException(type, payload) });
    },
  };
}
