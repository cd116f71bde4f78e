import type { CanonicalEvent, FinishEvent } from '../protocol/canonical/events.ts';
import type { CanonicalAssistantMessage } from '../protocol/canonical/request.ts';
import type { Usage } from '../protocol/canonical/usage.ts';
import type { ModelToolsOffer, OfferedTool } from './model-tools.ts';

/** A call the model made to an MCP tool: run by sluice, never seen by the client as a tool call. */
export interface McpCall {
  id: string;
  /** The prefixed name the model called, and the server's tool. */
  prefixed: string;
  tool: OfferedTool;
  arguments: string;
}

/**
 * One model call of the tool loop, read event by event. What the client gets passes on at once,
 * but for what only the loop's end may say: the finish, the usage (the loop reports the sum of
 * its steps) and the end marker are held. A call to an MCP tool becomes the `mcp` events of its
 * start and its arguments (the surfaces render them as MCP calls, not as calls the client must
 * run); a call to a tool of the client's passes as it came. Only choice 0: MCP tools take no `n`.
 */
export class LoopStep {
  private readonly offer: Pick<ModelToolsOffer, 'names' | 'listed'>;
  /** Tool-call index -> the MCP call it is, or null for a call of the client's own tools. */
  private readonly byIndex = new Map<number, McpCall | null>();
  readonly calls: McpCall[] = [];
  clientCalls = false;
  finish: FinishEvent | undefined;
  usage: Usage | undefined;
  ended = false;
  failed = false;
  /** The model's text, reasoning and its signature: the assistant turn the next step is sent. */
  private text = '';
  private reasoning = '';
  private signature: string | undefined;
  /** UTF-8 bytes of the step's output, which a budget watch prices. */
  outputBytes = 0;

  constructor(offer: Pick<ModelToolsOffer, 'names' | 'listed'>) {
    this.offer = offer;
  }

  /** The events the client gets for this one (none, it, or what it became). */
  pass(event: CanonicalEvent): CanonicalEvent[] {
    switch (event.type) {
      case 'text':
        this.text += event.text;
        this.outputBytes += Buffer.byteLength(event.text);
        return [event];
      case 'reasoning':
        this.reasoning += event.text;
        if (event.signature) this.signature = event.signature;
        this.outputBytes += Buffer.byteLength(event.text);
        return [event];
      case 'tool-call-start':
        return this.callStart(event);
      case 'tool-call-delta':
        return this.callDelta(event);
      case 'finish':
        this.finish ??= event;
        return [];
      case 'usage':
        this.usage = event.usage;
        return [];
      case 'end':
        this.ended = true;
        return [];
      case 'error':
        this.failed = true;
        return [event];
      default:
        return [event];
    }
  }

  private callStart(event: Extract<CanonicalEvent, { type: 'tool-call-start' }>): CanonicalEvent[] {
    const tool = this.offer.names.get(event.name) ?? this.unoffered(event.name);
    if (!tool) {
      this.clientCalls = true;
      this.byIndex.set(event.index, null);
      return [event];
    }
    const call: McpCall = { id: event.id, prefixed: event.name, tool, arguments: '' };
    this.byIndex.set(event.index, call);
    this.calls.push(call);
    this.outputBytes += Buffer.byteLength(event.name);
    return [{ type: 'mcp', step: { kind: 'call-start', id: call.id, server: tool.server, name: tool.name } }];
  }

  private callDelta(event: Extract<CanonicalEvent, { type: 'tool-call-delta' }>): CanonicalEvent[] {
    const call = this.byIndex.get(event.index);
    if (call === null || call === undefined) return [event];
    call.arguments += event.arguments;
    this.outputBytes += Buffer.byteLength(event.arguments);
    return event.arguments ? [{ type: 'mcp', step: { kind: 'call-arguments', id: call.id, delta: event.arguments } }] : [];
  }

  /**
   * A name under the prefix of a server the request named that was not offered (a tool the
   * caller may not call, which the model guessed): still sluice's to answer, so the gateway
   * refuses it (a ledger row says so) rather than the client getting a call it never offered.
   */
  private unoffered(prefixed: string): OfferedTool | undefined {
    const at = prefixed.indexOf('__');
    if (at < 0) return undefined;
    const server = prefixed.slice(0, at);
    return this.offer.listed.some((l) => l.server === server) ? { server, name: prefixed.slice(at + 2) } : undefined;
  }

  /** The model's turn as the next step's request repeats it: its text and its calls of MCP tools. */
  assistantTurn(): CanonicalAssistantMessage {
    return {
      role: 'assistant',
      content: this.text || null,
      ...(this.reasoning || this.signature
        ? { reasoning_content: this.reasoning, ...(this.signature ? { reasoning_signature: this.signature } : {}) }
        : {}),
      tool_calls: this.calls.map((call) => ({
        id: call.id,
        type: 'function' as const,
        function: { name: call.prefixed, arguments: call.arguments || '{}' },
      })),
    };
  }
}

/** The usage of several model calls: each count summed; `estimated` when any step's was. */
export function addUsage(total: Usage | undefined, step: Usage): Usage {
  if (!total) return step;
  const sum = (a: number | undefined, b: number | undefined) =>
    a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0);
  const usage: Usage = {
    inputTokens: total.inputTokens + step.inputTokens,
    outputTokens: total.outputTokens + step.outputTokens,
    source: total.source === 'estimated' || step.source === 'estimated' ? 'estimated' : 'provider',
  };
  const optional = ['cachedInputTokens', 'cacheWriteTokens', 'reasoningTokens', 'audioInputTokens', 'audioOutputTokens'] as const;
  for (const field of optional) {
    const value = sum(total[field], step[field]);
    if (value !== undefined) usage[field] = value;
  }
  return usage;
}
