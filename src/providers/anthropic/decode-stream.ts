import { errors } from '../../errors/catalog.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import type { SseFrame } from '../../protocol/sse/parse-upstream.ts';
import { createSseStreamDecoder, type SseFrameDecoder } from '../sse-decoder.ts';
import type { StreamDecoder } from '../types.ts';
import { RESPONSE_FORMAT_TOOL } from '../response-format-tool.ts';
import { anthropicFinishReason } from './finish-reason.ts';
import { generateCallId } from '../openai-compatible/decode-chunk.ts';
import { anthropicStreamError, PROVIDER } from './map-error.ts';
import { checkPayload } from '../upstream-schema.ts';
import { commonEvent } from './common-event.ts';
import { textDelta } from './text-delta.ts';
import { type AnthropicContentBlock, type AnthropicStreamPayload, streamPayloadSchema } from './payload-schema.ts';
import { type AnthropicUsage, convertAnthropicUsage, mergeAnthropicUsage } from './usage.ts';

interface ToolBlock {
  toolIndex: number;
  sawArguments: boolean;
  /** The forced tool of a JSON response format: its input is the message content. */
  answer: boolean;
}

/**
 * Messages API stream events -> canonical events. Tool calls are numbered by the order their
 * tool_use blocks start (0, 1, …), not by Anthropic's content block index, which also counts text
 * and thinking blocks (fixtures/anthropic/parallel-tool-use.sse has tools at blocks 1 and 2).
 * The tool sluice forces for a JSON response format (RESPONSE_FORMAT_TOOL) is no call: its input
 * streams as text, and the turn it ends finishes with `stop`, as an OpenAI JSON answer does.
 */
export class AnthropicEventDecoder {
  private readonly tools = new Map<number, ToolBlock>();
  private nextToolIndex = 0;
  private answered = false;
  private usage: AnthropicUsage = {};
  private finished = false;
  private broken = false;

  /** True once an event could not be translated (an error event was emitted): ignore the rest. */
  get failed(): boolean {
    return this.broken;
  }

  decode(payload: AnthropicStreamPayload, out: CanonicalEvent[]): void {
    if (this.broken) return;
    switch (payload.type) {
      case 'message_start':
        this.messageStart(payload, out);
        break;
      case 'content_block_start':
        if (payload.content_block) this.startBlock(payload.index ?? 0, payload.content_block, out);
        break;
      case 'content_block_delta':
        this.delta(payload, out);
        break;
      case 'content_block_stop':
        this.stopBlock(payload.index ?? 0, out);
        break;
      case 'message_delta':
        this.messageDelta(payload, out);
        break;
      case 'error':
        out.push({ type: 'error', error: anthropicStreamError(payload) });
        break;
      // ping, message_stop and event types added later carry nothing to translate.
    }
  }

  private messageStart(payload: AnthropicStreamPayload, out: CanonicalEvent[]): void {
    const message = payload.message;
    out.push({ type: 'start', upstreamId: message?.id, upstreamModel: message?.model });
    // Input tokens are known now: a stream cut short still accounts for them.
    if (message?.usage) this.addUsage(message.usage, out);
  }

  private stopBlock(index: number, out: CanonicalEvent[]): void {
    const tool = this.tools.get(index);
    // A call without arguments streams one empty partial_json (fixtures/anthropic/tool-no-args.jsonl).
    if (tool && !tool.sawArguments) {
      tool.sawArguments = true;
      out.push(this.toolInput(tool, '{}'));
    }
  }

  private messageDelta(payload: AnthropicStreamPayload, out: CanonicalEvent[]): void {
    const stopReason = payload.delta?.stop_reason;
    if (stopReason && !this.finished) {
      this.finished = true;
      const answer = stopReason === 'tool_use' && this.answered && this.nextToolIndex === 0;
      out.push({
        type: 'finish',
        choice: 0,
        reason: answer ? 'stop' : anthropicFinishReason(stopReason),
        rawReason: stopReason,
      });
    }
    if (payload.usage) this.addUsage(payload.usage, out);
  }

  private startBlock(index: number, block: AnthropicContentBlock, out: CanonicalEvent[]): void {
    switch (block.type) {
      case 'text':
        if (block.text) out.push({ type: 'text', choice: 0, text: block.text });
        break;
      case 'thinking':
        // Streams open the block empty (fixtures/anthropic/thinking-signature.sse); whole messages do not.
        if (block.thinking) out.push({ type: 'reasoning', choice: 0, text: block.thinking });
        if (block.signature) out.push({ type: 'reasoning', choice: 0, text: '', signature: block.signature });
        break;
      case 'redacted_thinking':
        if (block.data) out.push({ type: 'reasoning', choice: 0, text: '', redacted: block.data });
        break;
      case 'tool_use': {
        if (block.name === RESPONSE_FORMAT_TOOL) {
          this.answered = true;
          this.tools.set(index, { toolIndex: -1, sawArguments: false, answer: true });
          break;
        }
        // A call without a name cannot be answered (the client has no tool to run); one without an
        // id still can, as long as it gets one to match its result against.
        if (!block.name) {
          this.broken = true;
          out.push({ type: 'error', error: errors.malformed(PROVIDER, 'tool_use block without a name') });
          break;
        }
        const tool = { toolIndex: this.nextToolIndex++, sawArguments: false, answer: false };
        this.tools.set(index, tool);
        out.push({
          type: 'tool-call-start',
          choice: 0,
          index: tool.toolIndex,
          id: block.id || generateCallId(),
          name: block.name,
        });
        break;
      }
      // Server tool blocks (web search, code execution) only answer tools sluice never sends.
    }
  }

  private delta(payload: AnthropicStreamPayload, out: CanonicalEvent[]): void {
    const delta = payload.delta;
    switch (delta?.type) {
      case 'text_delta':
        if (delta.text) out.push({ type: 'text', choice: 0, text: delta.text });
        break;
      case 'thinking_delta':
        if (delta.thinking) out.push({ type: 'reasoning', choice: 0, text: delta.thinking });
        break;
      case 'signature_delta':
        if (delta.signature) out.push({ type: 'reasoning', choice: 0, text: '', signature: delta.signature });
        break;
      case 'input_json_delta': {
        const tool = this.tools.get(payload.index ?? 0);
        if (tool && delta.partial_json) {
          tool.sawArguments = true;
          out.push(this.toolInput(tool, delta.partial_json));
        }
        break;
      }
    }
  }

  private toolInput(tool: ToolBlock, json: string): CanonicalEvent {
    return tool.answer
      ? { type: 'text', choice: 0, text: json }
      : { type: 'tool-call-delta', choice: 0, index: tool.toolIndex, arguments: json };
  }

  private addUsage(update: AnthropicUsage, out: CanonicalEvent[]): void {
    this.usage = mergeAnthropicUsage(this.usage, update);
    out.push({ type: 'usage', usage: convertAnthropicUsage(this.usage) });
  }
}

/**
 * SSE frames of a Messages API stream -> canonical events; nothing is read after an error.
 * `onPayload` is shown each frame's checked payload before it is decoded: a relay that passes the
 * frames on as they came follows what they open and close by it, without a parse of its own.
 */
export function createAnthropicFrameDecoder(onPayload?: (payload: AnthropicStreamPayload) => void): SseFrameDecoder {
  const events = new AnthropicEventDecoder();
  let failed = false;
  return {
    frame(frame: SseFrame, out: CanonicalEvent[]) {
      if (failed) return;
      // Most events are text deltas: read without JSON.parse (text-delta.ts).
      const typed = textDelta(frame.data) ?? parsedPayload(frame.data, out);
      if (typed === undefined) {
        failed = true;
        return;
      }
      // The `event:` line and the payload's `type` agree; the payload is the one documented as required.
      if (typed.type === undefined && frame.event) typed.type = frame.event;
      onPayload?.(typed);
      events.decode(typed, out);
      if (typed.type === 'error' || events.failed) failed = true;
    },
    end() {
      // A stream that ends without message_delta has no finish: the pipeline reports it truncated.
    },
  };
}

/** An event's payload, parsed and checked; undefined, with the error pushed to `out`, when it is not one. */
function parsedPayload(data: string, out: CanonicalEvent[]): AnthropicStreamPayload | undefined {
  let payload: unknown;
  try {
    payload = JSON.parse(data);
  } catch {
    payload = undefined;
  }
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) {
    out.push({ type: 'error', error: errors.malformed(PROVIDER, `event is not a JSON object: ${data.slice(0, 120)}`) });
    return undefined;
  }
  // The per-token events are checked by hand; every other goes through the schema (common-event.ts).
  const typed = commonEvent(payload as Record<string, unknown>);
  if (typed !== undefined) return typed;
  const checked = checkPayload(streamPayloadSchema, payload, PROVIDER, 'event');
  if (checked.ok) return checked.value;
  out.push({ type: 'error', error: checked.error });
  return undefined;
}

export function createAnthropicStreamDecoder(): StreamDecoder {
  return createSseStreamDecoder(PROVIDER, createAnthropicFrameDecoder());
}
