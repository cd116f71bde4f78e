import type { GatewayError } from '../../errors/gateway-error.ts';
import type { CanonicalEvent, FinishEvent } from '../../protocol/canonical/events.ts';
import type { Usage } from '../../protocol/canonical/usage.ts';
import { namedFrame } from '../../protocol/sse/frames.ts';
import type { SseDialect } from '../../protocol/sse/sse-writer.ts';
import { anthropicErrorBody } from '../../protocol/anthropic-errors.ts';

/** What a Messages response says about itself: sluice's id, the model as the client named it. */
export interface MessageIdentity {
  id: string;
  model: string;
}

/** Anthropic's usage object: input_tokens excludes cache reads and writes (canonical input includes them). */
export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal';

export type MessageBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

/** A block being built: tool input arrives as JSON text and is parsed once the message is whole. */
type OpenBlock = MessageBlock & { json?: string };

const ANTHROPIC_REASONS = new Set<string>(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal']);

export function toAnthropicUsage(usage: Usage): AnthropicUsage {
  const cacheRead = usage.cachedInputTokens ?? 0;
  const cacheWrite = usage.cacheWriteTokens ?? 0;
  return {
    input_tokens: Math.max(0, usage.inputTokens - cacheRead - cacheWrite),
    output_tokens: usage.outputTokens,
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
  };
}

/** The canonical finish as Anthropic's stop_reason; a provider that said one of Anthropic's (Bedrock does) keeps it. */
export function stopReasonOf(finish: FinishEvent | null): StopReason {
  if (finish?.rawReason && ANTHROPIC_REASONS.has(finish.rawReason)) return finish.rawReason as StopReason;
  switch (finish?.reason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/** Anthropic's keep-alive: the SDKs skip it, as they skip comments. */
export const PING_FRAME = namedFrame('ping', '{"type":"ping"}');

/** A Messages stream is kept alive with `ping` and ends at `message_stop` (or `error`): no `[DONE]`. */
export const MESSAGES_SSE_DIALECT: SseDialect = { keepAlive: PING_FRAME, done: '' };

/**
 * Canonical events -> the Messages stream's content block events, and the same state for a whole
 * message. Anthropic's blocks never interleave: a block of another kind (or a new tool call)
 * stops the open one. Thinking is one block per signature: a signature closes its block, so
 * reasoning after it opens a new one. Only the first choice exists in this API.
 */
export class MessagesEventEncoder {
  private readonly identity: MessageIdentity;
  private readonly blocks: OpenBlock[] = [];
  /** The index of the open block, or -1. */
  private open = -1;
  /** Canonical tool index -> block index. */
  private readonly tools = new Map<number, number>();
  private finish: FinishEvent | null = null;
  private finishedFlag = false;

  constructor(identity: MessageIdentity) {
    this.identity = identity;
  }

  /** The upstream finished the message: a normal end is legitimate. */
  get finished(): boolean {
    return this.finish !== null;
  }

  /** `message_start`, with the input usage known now (the rest of the usage comes in message_delta). */
  start(usage: Usage): string {
    const message = {
      id: this.identity.id,
      type: 'message',
      role: 'assistant',
      model: this.identity.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...toAnthropicUsage(usage), output_tokens: 0 },
    };
    return frame('message_start', { type: 'message_start', message });
  }

  encode(event: CanonicalEvent): string {
    if ('choice' in event && event.choice !== 0) return '';
    switch (event.type) {
      case 'text':
      case 'refusal':
        return event.text ? this.textDelta(event.text) : '';
      case 'reasoning':
        if (event.redacted !== undefined) return this.redacted(event.redacted);
        return this.reasoning(event.text, event.signature);
      case 'tool-call-start':
        return this.toolStart(event.index, event.id, event.name);
      case 'tool-call-delta':
        return this.toolDelta(event.index, event.arguments);
      case 'finish':
        this.finish ??= event;
        return this.stopOpen();
      default:
        return '';
    }
  }

  /** `message_delta` (stop_reason and the whole usage, as Anthropic's latest streams send it) and `message_stop`. */
  closing(usage: Usage): string {
    if (this.finishedFlag) return '';
    this.finishedFlag = true;
    const frames = this.stopOpen();
    const delta = {
      type: 'message_delta',
      delta: { stop_reason: stopReasonOf(this.finish), stop_sequence: null },
      usage: toAnthropicUsage(usage),
    };
    return frames + frame('message_delta', delta) + frame('message_stop', { type: 'message_stop' });
  }

  /** A failure after the stream started: Anthropic's `event: error` (its SDKs raise it as an APIError of that type). */
  failure(error: GatewayError): string {
    return frame('error', anthropicErrorBody(error));
  }

  /** The whole message, for a response without `stream` (or the state of a stream so far). */
  message(usage: Usage): Record<string, unknown> {
    return {
      id: this.identity.id,
      type: 'message',
      role: 'assistant',
      model: this.identity.model,
      content: this.blocks.map(finalBlock),
      stop_reason: stopReasonOf(this.finish),
      stop_sequence: null,
      usage: toAnthropicUsage(usage),
    };
  }

  private textDelta(text: string): string {
    let frames = '';
    if (this.current()?.type !== 'text') frames += this.begin({ type: 'text', text: '' });
    (this.current() as { text: string }).text += text;
    return frames + this.delta({ type: 'text_delta', text });
  }

  private reasoning(text: string, signature: string | undefined): string {
    let frames = '';
    const current = this.current();
    if (current?.type !== 'thinking' || current.signature)
      frames += this.begin({ type: 'thinking', thinking: '', signature: '' });
    const block = this.current() as { thinking: string; signature: string };
    if (text) {
      block.thinking += text;
      frames += this.delta({ type: 'thinking_delta', thinking: text });
    }
    if (signature) {
      block.signature = signature;
      frames += this.delta({ type: 'signature_delta', signature });
    }
    return frames;
  }

  /** Redacted thinking comes whole: a block opened with its data and stopped at once, as Anthropic streams it. */
  private redacted(data: string): string {
    return this.begin({ type: 'redacted_thinking', data }) + this.stopOpen();
  }

  private toolStart(index: number, id: string, name: string): string {
    // Some providers stream calls without an id (Gemini): the next turn's tool_result needs one.
    const block = { type: 'tool_use' as const, id: id || `toolu_${this.identity.id}_${index}`, name, input: {}, json: '' };
    const frames = this.begin(block);
    this.tools.set(index, this.open);
    return frames;
  }

  private toolDelta(index: number, json: string): string {
    const at = this.tools.get(index);
    if (at === undefined || !json) return '';
    const block = this.blocks[at];
    block.json = (block.json ?? '') + json;
    return frame('content_block_delta', {
      type: 'content_block_delta',
      index: at,
      delta: { type: 'input_json_delta', partial_json: json },
    });
  }

  private current(): OpenBlock | undefined {
    return this.open >= 0 ? this.blocks[this.open] : undefined;
  }

  private begin(block: OpenBlock): string {
    const frames = this.stopOpen();
    this.blocks.push(block);
    this.open = this.blocks.length - 1;
    const { json: _json, ...shown } = block;
    // A streamed block starts empty; its content follows in deltas (redacted thinking excepted).
    const start = shown.type === 'tool_use' ? { ...shown, input: {} } : shown;
    return frames + frame('content_block_start', { type: 'content_block_start', index: this.open, content_block: start });
  }

  private delta(delta: Record<string, unknown>): string {
    return frame('content_block_delta', { type: 'content_block_delta', index: this.open, delta });
  }

  private stopOpen(): string {
    if (this.open < 0) return '';
    const index = this.open;
    this.open = -1;
    return frame('content_block_stop', { type: 'content_block_stop', index });
  }
}

function finalBlock(block: OpenBlock): MessageBlock {
  if (block.type !== 'tool_use') return block;
  return { type: 'tool_use', id: block.id, name: block.name, input: parseInput(block.json ?? '') };
}

/** A tool call's arguments as Anthropic's `input` object: a model's broken JSON is kept under `_raw` rather than lost. */
function parseInput(json: string): Record<string, unknown> {
  if (json.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(json);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through
  }
  return { _raw: json };
}

function frame(event: string, payload: unknown): string {
  return namedFrame(event, JSON.stringify(payload));
}
