import { errorObject } from '../../errors/render.ts';
import type { GatewayError } from '../../errors/gateway-error.ts';
import type { CanonicalEvent, McpListedTool, McpStep, TokenLogprob, UrlCitation } from '../../protocol/canonical/events.ts';
import type { FinishReason } from '../../protocol/canonical/finish-reason.ts';
import type { Usage } from '../../protocol/canonical/usage.ts';
import { namedFrame } from '../../protocol/sse/frames.ts';
import { type ResponsesStreamChoices, STREAM_PROFILES } from '../../protocol/stream-profiles.ts';
import { buildResponse, type OutputItem, type OutputPart, type ResponseIdentity, type ResponseState } from './encode-response.ts';

type MessageItem = Extract<OutputItem, { type: 'message' }>;
type ReasoningItem = Extract<OutputItem, { type: 'reasoning' }>;
type CallItem = Extract<OutputItem, { type: 'function_call' }>;
type McpCallItem = Extract<OutputItem, { type: 'mcp_call' }>;

/**
 * Canonical events -> the Responses event grammar: response.created and .in_progress before the
 * first output, an output item per reasoning block, message and function call (each with its own
 * output_index), every `added` closed by its `done`, sequence_number increasing by one, and one
 * terminal event (completed, incomplete or failed). Only choice 0 is rendered: the Responses API
 * has no `n`. `choices`: the stream profile's (OpenAI's by default).
 */
export class ResponsesEventEncoder {
  private readonly identity: ResponseIdentity;
  private readonly choices: ResponsesStreamChoices;
  private seq = 0;
  private started = false;
  private readonly output: OutputItem[] = [];
  private message: { item: MessageItem; index: number; part: OutputPart | null } | null = null;
  private reasoning: { item: ReasoningItem; index: number } | null = null;
  private readonly calls = new Map<number, { item: CallItem; index: number; open: boolean }>();
  /** The MCP calls sluice runs (src/mcp/tool-loop.ts), by the model's call id, open until their result. */
  private readonly mcpCalls = new Map<string, { item: McpCallItem; index: number; open: boolean }>();
  private finish: FinishReason | null = null;
  /** The MCP tool loop stopped at mcp.max_steps: the response is incomplete for it. */
  private maxSteps = false;
  private nextId = 0;

  constructor(identity: ResponseIdentity, choices: ResponsesStreamChoices = STREAM_PROFILES.openai.responses) {
    this.identity = identity;
    this.choices = choices;
  }

  get finished(): boolean {
    return this.finish !== null;
  }

  encode(event: CanonicalEvent): string {
    if ('choice' in event && event.choice !== 0) return '';
    switch (event.type) {
      case 'text':
        return event.text ? this.start() + this.messageDelta('output_text', event.text, event.logprobs) : '';
      case 'refusal':
        return event.text ? this.start() + this.messageDelta('refusal', event.text) : '';
      case 'annotation':
        return this.start() + this.annotation(event.annotation);
      case 'reasoning':
        return this.start() + this.reasoningDelta(event.text, event.signature);
      case 'tool-call-start':
        return this.overCallLimit(event.index) ? '' : this.start() + this.callStart(event.index, event.id, event.name);
      case 'tool-call-delta':
        return this.overCallLimit(event.index) ? '' : this.callDelta(event.index, event.arguments);
      case 'finish':
        this.finish ??= event.reason;
        return '';
      case 'mcp':
        return this.mcp(event.step);
      default:
        return '';
    }
  }

  /**
   * What sluice's MCP tool loop did, as OpenAI's Responses API reports its hosted MCP tool: an
   * `mcp_list_tools` item per server, an `mcp_call` item per call (its arguments streamed, then
   * its output or error).
   */
  private mcp(step: McpStep): string {
    switch (step.kind) {
      case 'list-tools':
        return this.start() + this.listTools(step.server, step.tools);
      case 'call-start':
        return this.start() + this.mcpCallStart(step.id, step.server, step.name);
      case 'call-arguments':
        return this.mcpCallDelta(step.id, step.delta);
      case 'call-done':
        return this.start() + this.mcpCallDone(step);
      case 'max-steps':
        this.maxSteps = true;
        return '';
      case 'next-step':
        return '';
    }
  }

  private listTools(server: string, tools: readonly McpListedTool[]): string {
    let frames = this.closeAll();
    const item: OutputItem = { type: 'mcp_list_tools', id: this.id('mcpl'), server_label: server, tools: [], error: null };
    const added = this.addItem(item);
    const where = { item_id: item.id, output_index: added.index };
    frames += added.frames + this.event('response.mcp_list_tools.in_progress', where);
    item.tools = tools.map((t) => ({
      name: t.name,
      description: t.description ?? null,
      input_schema: t.inputSchema,
      annotations: null,
    }));
    frames += this.event('response.mcp_list_tools.completed', where);
    return frames + this.event('response.output_item.done', { output_index: added.index, item });
  }

  private mcpCallStart(callId: string, server: string, name: string): string {
    let frames = this.closeReasoning() + this.closeMessage('completed');
    const item: McpCallItem = {
      type: 'mcp_call',
      id: this.id('mcp'),
      server_label: server,
      name,
      arguments: '',
      output: null,
      error: null,
      status: 'in_progress',
    };
    const added = this.addItem(item);
    this.mcpCalls.set(callId, { item, index: added.index, open: true });
    frames += added.frames;
    return frames + this.event('response.mcp_call.in_progress', { item_id: item.id, output_index: added.index });
  }

  private mcpCallDelta(callId: string, delta: string): string {
    const call = this.mcpCalls.get(callId);
    if (!call?.open) return '';
    call.item.arguments += delta;
    return this.event('response.mcp_call_arguments.delta', { item_id: call.item.id, output_index: call.index, delta });
  }

  private mcpCallDone(step: Extract<McpStep, { kind: 'call-done' }>): string {
    let frames = '';
    if (!this.mcpCalls.get(step.id)?.open) frames += this.mcpCallStart(step.id, step.server, step.name);
    const call = this.mcpCalls.get(step.id) as { item: McpCallItem; index: number; open: boolean };
    call.item.arguments = step.arguments;
    call.item.output = step.output;
    call.item.error = step.error;
    return frames + this.closeMcpCall(call, step.error === null ? 'completed' : 'failed');
  }

  private closeMcpCall(call: { item: McpCallItem; index: number; open: boolean }, status: 'completed' | 'failed'): string {
    call.open = false;
    call.item.status = status;
    const where = { item_id: call.item.id, output_index: call.index };
    return (
      this.event('response.mcp_call_arguments.done', { ...where, arguments: call.item.arguments }) +
      this.event(status === 'completed' ? 'response.mcp_call.completed' : 'response.mcp_call.failed', where) +
      this.event('response.output_item.done', { output_index: call.index, item: call.item })
    );
  }

  /** Calls the loop never finished (the stream failed while one ran) are closed as failed. */
  private closeMcpCalls(): string {
    let frames = '';
    for (const call of this.mcpCalls.values()) if (call.open) frames += this.closeMcpCall(call, 'failed');
    return frames;
  }

  private incompleteReason(): ResponseState['incompleteReason'] {
    if (this.maxSteps) return 'max_steps';
    return this.finish === 'length' ? 'max_output_tokens' : this.finish === 'content_filter' ? 'content_filter' : null;
  }

  /** All items closed, then response.completed (or .incomplete for length / content filter). */
  closing(usage: Usage): string {
    let frames = this.start() + this.closeAll() + this.closeMcpCalls();
    const incompleteReason = this.incompleteReason();
    const state: ResponseState = {
      status: incompleteReason ? 'incomplete' : 'completed',
      output: this.output,
      usage,
      incompleteReason,
    };
    frames += this.event(incompleteReason ? 'response.incomplete' : 'response.completed', {
      response: buildResponse(this.identity, state),
    });
    return frames;
  }

  /**
   * `error` then response.failed, both carrying the upstream's code and message. OpenAI sends the
   * `error` event first (fixtures/openai-responses/failed-insufficient-quota.jsonl), and it is what
   * makes the openai SDK raise: it treats response.failed as an ordinary end. A profile may leave
   * it out (reference/responses-streaming.txt: response.failed alone).
   */
  failure(error: GatewayError, usage: Usage | null): string {
    let frames = this.start() + this.closeAll('incomplete') + this.closeMcpCalls();
    const code = error.code === 'timeout' ? 'request_timeout' : error.code;
    const state: ResponseState = { status: 'failed', output: this.output, usage, error: { code, message: error.message } };
    if (this.choices.errorEvent) frames += this.event('error', { error: { ...errorObject(error), code } });
    return frames + this.event('response.failed', { response: buildResponse(this.identity, state) });
  }

  /** The final state, for the non-streaming body and the store (every item closed). */
  state(usage: Usage | null): ResponseState {
    this.closeAll();
    this.closeMcpCalls();
    const incompleteReason = this.incompleteReason();
    return { status: incompleteReason ? 'incomplete' : 'completed', output: this.output, usage, incompleteReason };
  }

  private event(type: string, fields: Record<string, unknown>): string {
    return namedFrame(type, JSON.stringify({ type, sequence_number: this.seq++, ...fields }));
  }

  private start(): string {
    if (this.started) return '';
    this.started = true;
    const response = buildResponse(this.identity, { status: 'in_progress', output: [], usage: null });
    // reference/responses-streaming.txt's response.created: `"usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0}`.
    if (this.choices.createdUsage === 'zeros') response.usage = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
    return this.event('response.created', { response }) + this.event('response.in_progress', { response });
  }

  private id(prefix: string): string {
    return `${prefix}_${this.identity.id.replace(/^resp_/, '')}_${this.nextId++}`;
  }

  private addItem(item: OutputItem): { frames: string; index: number } {
    const index = this.output.length;
    this.output.push(item);
    const announced = item.type === 'message' ? { ...item, status: 'in_progress', content: [] } : { ...item };
    if (announced.type === 'function_call') announced.arguments = '';
    if (announced.type === 'reasoning') announced.summary = [];
    return { frames: this.event('response.output_item.added', { output_index: index, item: announced }), index };
  }

  /**
   * `max_tool_calls`, which sluice enforces: OpenAI ignores the calls past the limit, so they are
   * left out of the response (canonical calls are numbered from 0 in the order they start).
   */
  private overCallLimit(index: number): boolean {
    const max = this.identity.request.max_tool_calls;
    return max != null && index >= max;
  }

  private messageDelta(kind: 'output_text' | 'refusal', text: string, logprobs: TokenLogprob[] = []): string {
    const { frames, where, part } = this.openPart(kind);
    if (part.type === 'output_text') {
      part.text += text;
      part.logprobs.push(...logprobs);
      return frames + this.event('response.output_text.delta', { ...where, delta: text, logprobs });
    }
    part.refusal += text;
    return frames + this.event('response.refusal.delta', { ...where, delta: text });
  }

  /** A citation belongs to the output_text part it annotates (opened here when it comes first). */
  private annotation(a: UrlCitation): string {
    const { frames, where, part } = this.openPart('output_text');
    if (part.type !== 'output_text') return frames;
    const annotation = { type: 'url_citation', start_index: a.startIndex, end_index: a.endIndex, url: a.url, title: a.title };
    part.annotations.push(annotation);
    return (
      frames +
      this.event('response.output_text.annotation.added', { ...where, annotation_index: part.annotations.length - 1, annotation })
    );
  }

  /** Opens the message item and a part of this kind where needed, closing what stands in the way. */
  private openPart(kind: 'output_text' | 'refusal'): {
    frames: string;
    where: { item_id: string; output_index: number; content_index: number };
    part: OutputPart;
  } {
    let frames = '';
    if (!this.message) {
      frames += this.closeAll();
      const item: MessageItem = { type: 'message', id: this.id('msg'), status: 'in_progress', role: 'assistant', content: [] };
      const added = this.addItem(item);
      frames += added.frames;
      this.message = { item, index: added.index, part: null };
    }
    const m = this.message;
    if (m.part && m.part.type !== kind) frames += this.closePart();
    let part = m.part;
    if (!part) {
      part =
        kind === 'output_text'
          ? { type: 'output_text', text: '', annotations: [], logprobs: [] }
          : { type: 'refusal', refusal: '' };
      m.part = part;
      m.item.content.push(part);
      frames += this.event('response.content_part.added', {
        item_id: m.item.id,
        output_index: m.index,
        content_index: m.item.content.length - 1,
        part: { ...part },
      });
    }
    return { frames, where: { item_id: m.item.id, output_index: m.index, content_index: m.item.content.length - 1 }, part };
  }

  private closePart(): string {
    const m = this.message;
    if (!m?.part) return '';
    const contentIndex = m.item.content.length - 1;
    const where = { item_id: m.item.id, output_index: m.index, content_index: contentIndex };
    const part = m.part;
    m.part = null;
    const done =
      part.type === 'output_text'
        ? this.event('response.output_text.done', { ...where, text: part.text, logprobs: part.logprobs })
        : this.event('response.refusal.done', { ...where, refusal: part.refusal });
    return done + this.event('response.content_part.done', { ...where, part: { ...part } });
  }

  private reasoningDelta(text: string, signature: string | undefined): string {
    let frames = '';
    if (!this.reasoning) {
      frames += this.closeAll();
      const item: ReasoningItem = { type: 'reasoning', id: this.id('rs'), summary: [] };
      const added = this.addItem(item);
      frames += added.frames;
      this.reasoning = { item, index: added.index };
    }
    const r = this.reasoning;
    // The provider's signature round-trips as encrypted_content (see to-chat-request.ts).
    if (signature) r.item.encrypted_content = signature;
    if (!text) return frames;
    const where = { item_id: r.item.id, output_index: r.index, summary_index: 0 };
    if (r.item.summary.length === 0) {
      r.item.summary.push({ type: 'summary_text', text: '' });
      frames += this.event('response.reasoning_summary_part.added', { ...where, part: { type: 'summary_text', text: '' } });
    }
    r.item.summary[0].text += text;
    return frames + this.event('response.reasoning_summary_text.delta', { ...where, delta: text });
  }

  private closeReasoning(): string {
    const r = this.reasoning;
    if (!r) return '';
    this.reasoning = null;
    let frames = '';
    if (r.item.summary.length > 0) {
      const where = { item_id: r.item.id, output_index: r.index, summary_index: 0 };
      const text = r.item.summary[0].text;
      frames += this.event('response.reasoning_summary_text.done', { ...where, text });
      frames += this.event('response.reasoning_summary_part.done', { ...where, part: { type: 'summary_text', text } });
    }
    return frames + this.event('response.output_item.done', { output_index: r.index, item: r.item });
  }

  private closeMessage(status: string): string {
    const m = this.message;
    if (!m) return '';
    const frames = this.closePart();
    this.message = null;
    m.item.status = status;
    return frames + this.event('response.output_item.done', { output_index: m.index, item: m.item });
  }

  private callStart(index: number, callId: string, name: string): string {
    let frames = this.closeReasoning() + this.closeMessage('completed');
    const item: CallItem = {
      type: 'function_call',
      id: this.id('fc'),
      call_id: callId,
      name,
      arguments: '',
      status: 'in_progress',
    };
    const added = this.addItem(item);
    frames += added.frames;
    this.calls.set(index, { item, index: added.index, open: true });
    return frames;
  }

  private callDelta(index: number, args: string): string {
    const call = this.calls.get(index);
    if (!call?.open || !args) return '';
    call.item.arguments += args;
    const where = { item_id: call.item.id, output_index: call.index };
    // reference/responses-streaming.txt names the call on its deltas too: `item_id, output_index, call_id, delta`.
    const fields = this.choices.argumentsCallId
      ? { ...where, call_id: call.item.call_id, delta: args }
      : { ...where, delta: args };
    return this.event('response.function_call_arguments.delta', fields);
  }

  private closeCalls(status: string): string {
    let frames = '';
    for (const call of this.calls.values()) {
      if (!call.open) continue;
      call.open = false;
      call.item.status = status;
      const { id, call_id, name, arguments: args } = call.item;
      frames += this.event('response.function_call_arguments.done', {
        item_id: id,
        output_index: call.index,
        call_id,
        name,
        arguments: args,
      });
      frames += this.event('response.output_item.done', { output_index: call.index, item: call.item });
    }
    return frames;
  }

  private closeAll(status = 'completed'): string {
    return this.closeReasoning() + this.closeMessage(status) + this.closeCalls(status);
  }
}
