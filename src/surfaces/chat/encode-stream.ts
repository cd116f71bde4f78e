import type { GatewayError } from '../../errors/gateway-error.ts';
import { errorObject, renderStreamError } from '../../errors/render.ts';
import type { CanonicalEvent, McpStep, TokenLogprob } from '../../protocol/canonical/events.ts';
import type { FinishReason } from '../../protocol/canonical/finish-reason.ts';
import { toOpenAIUsage, type Usage } from '../../protocol/canonical/usage.ts';
import { dataFrame, namedFrame } from '../../protocol/sse/frames.ts';
import type { ChatStreamChoices } from '../../protocol/stream-profiles.ts';
import { chatAnnotation } from './annotations.ts';
import { chatMcpCall } from './mcp-calls.ts';

/** The chat schema's max `n` (request-schema.ts), and so the number of choices a stream can have. */
const MAX_CHOICES = 128;

export interface ChatChunkEncoderOptions {
  id: string;
  created: number;
  /** The model as the client named it (`provider/model` or the alias). */
  model: string;
  provider: string;
  /** The client gets usage: it asked (`stream_options.include_usage`), or the profile always sends it. */
  includeUsage: boolean;
  /** Chunk frames: add `cost_usd` and `estimated` to the usage object. */
  usageExtensions: boolean;
  /**
   * The stream profile's choices (protocol/stream-profiles.ts). `frames: accounting` adds the flat
   * `type` / `data` / `provider` fields of reference/accounting-events.txt next to `choices`, and
   * ends with its own frames.
   */
  stream: ChatStreamChoices;
}

/** A failed stream's usage so far, as the accounting profile's error frame carries it. */
export interface UsageSoFar {
  usage: Usage;
  costUsd: number;
  latencyMs: number;
}

/** The flat fields of an accounting-profile frame: what kind of delta, and its text. */
type Flat = { type: string; data: string };

interface ChoiceState {
  started: boolean;
  finished: boolean;
  /**
   * Upstream tool-call index -> the dense index the client sees, in order of first appearance.
   * Made at the first tool call: most streams have none (an empty Map is ~180 bytes a stream).
   */
  toolIndex: Map<number, number> | undefined;
  /**
   * The upstream's content filter verdicts (JSON) for the delta that comes next, which carries
   * them as `content_filter_results`, as Azure's chunk did.
   */
  filter: string | undefined;
}

/**
 * Canonical events -> `chat.completion.chunk` frames. Frames are built from a per-stream prefix
 * and a small JSON delta rather than stringifying a whole chunk object: the chunk envelope is the
 * same for every frame of a response (see bench/ for the measurement).
 */
export class ChatChunkEncoder {
  private readonly options: ChatChunkEncoderOptions;
  private readonly choices: ChoiceState[] = [];
  private prefix: string | undefined;
  private readonly suffix: string;
  /** How a tool-call delta opens: `content: null` before the calls where the profile says so. */
  private readonly toolCallsOpen: string;
  private readonly accounting: boolean;
  /**
   * The finish chunks, held until the usage is known when the usage rides on the finish chunk
   * (reference/chat-streaming-full.txt); undefined when it does not.
   */
  private heldFinishes: string[] | undefined;
  /** The provider the frames name: changes when routing falls back to another before the first token. */
  private provider: string;
  private providerJson: string;
  private serviceTier: string | null = null;
  private systemFingerprint: string | null = null;

  constructor(options: ChatChunkEncoderOptions) {
    this.options = options;
    const stream = options.stream;
    this.accounting = stream.frames === 'accounting';
    this.provider = options.provider;
    this.providerJson = JSON.stringify(options.provider);
    // The accounting frames report usage in their own events, never in chunks.
    const nullUsage = stream.nullUsage === 'every' || (stream.nullUsage === 'requested' && options.includeUsage);
    this.suffix = nullUsage && !this.accounting ? '],"usage":null}' : ']}';
    this.toolCallsOpen = stream.toolCallContent === 'null' ? '{"content":null,"tool_calls":[' : '{"tool_calls":[';
    if (options.includeUsage && !this.accounting && stream.usageChunk === 'finish') this.heldFinishes = [];
  }

  /** True when every choice that started has finished (and at least one did). */
  get complete(): boolean {
    let any = false;
    for (const c of this.choices) {
      if (!c) continue;
      if (!c.finished) return false;
      any = true;
    }
    return any;
  }

  encode(event: CanonicalEvent): string {
    switch (event.type) {
      case 'start':
        return this.start(event);
      case 'text':
        return this.delta(event.choice, `{"content":${JSON.stringify(event.text)}}`, logprobs(event.logprobs, 'content'), {
          type: 'content',
          data: event.text,
        });
      case 'refusal':
        return this.delta(event.choice, `{"refusal":${JSON.stringify(event.text)}}`, logprobs(event.logprobs, 'refusal'), {
          type: 'refusal',
          data: event.text,
        });
      case 'reasoning':
        return this.reasoning(event);
      case 'annotation':
        return this.delta(event.choice, `{"annotations":[${JSON.stringify(chatAnnotation(event.annotation))}]}`, 'null', {
          type: 'annotation',
          data: event.annotation.url,
        });
      case 'tool-call-start':
        return this.toolCallStart(event);
      case 'tool-call-delta':
        return this.toolCallDelta(event);
      case 'finish': {
        const state = this.choice(event.choice);
        if (state.finished) return ''; // exactly one finish chunk, whatever the upstream repeats
        return this.roleChunk(event.choice, state) + this.finishChunk(event.choice, state, event.reason);
      }
      case 'fallback':
        this.provider = event.to.provider;
        this.providerJson = JSON.stringify(event.to.provider);
        return '';
      case 'vendor':
        return this.options.stream.vendorEvents === 'passthrough' ? this.openTurn() + vendorFrame(event.data) : '';
      case 'mcp':
        return this.mcp(event.step);
      case 'content-filter':
        return this.contentFilter(event);
      case 'usage':
      case 'error':
      case 'end':
        return '';
    }
  }

  /**
   * An MCP call sluice ran, or the step limit, on a chunk of its own with empty `choices` and the
   * `sluice` extension (docs/api/mcp.md): clients read it or skip it, none runs it as a tool call.
   * The accounting profile's frames have no place for it.
   */
  private mcp(step: McpStep): string {
    if (this.accounting) return '';
    let sluice: string;
    if (step.kind === 'call-done') sluice = `{"mcp_call":${JSON.stringify(chatMcpCall(step))}}`;
    else if (step.kind === 'max-steps') sluice = `{"mcp_max_steps":${step.steps}}`;
    else return '';
    return this.openTurn() + dataFrame(`${this.getPrefix()}"choices":[],"sluice":${sluice}}`);
  }

  private start(event: Extract<CanonicalEvent, { type: 'start' }>): string {
    if (event.serviceTier !== undefined) this.serviceTier = event.serviceTier;
    if (event.systemFingerprint !== undefined) this.systemFingerprint = event.systemFingerprint;
    this.prefix = undefined;
    return '';
  }

  /**
   * The signature travels as `reasoning_signature` so the client can send it back next turn
   * (docs/providers.md "Reasoning round trip"); redacted reasoning is never rendered.
   */
  private reasoning(event: Extract<CanonicalEvent, { type: 'reasoning' }>): string {
    const parts: string[] = [];
    if (event.text) parts.push(`"reasoning_content":${JSON.stringify(event.text)}`);
    if (event.signature) parts.push(`"reasoning_signature":${JSON.stringify(event.signature)}`);
    if (parts.length === 0) return '';
    return this.delta(event.choice, `{${parts.join(',')}}`, 'null', { type: 'reasoning', data: event.text });
  }

  /**
   * The prompt's verdicts are a chunk of their own with no choices (as Azure sends them); a
   * choice's ride on its next chunk. Verdicts already held (no delta came between) go out first,
   * on the role chunk or on a chunk with an empty delta, as do those that come after the finish.
   */
  private contentFilter(event: Extract<CanonicalEvent, { type: 'content-filter' }>): string {
    const json = JSON.stringify(event.results);
    if (event.choice === null) {
      const flat = this.flatFields({ type: 'content', data: '' });
      return `data: ${this.getPrefix()}${flat}"prompt_filter_results":${json},"choices":[${this.suffix}\n\n`;
    }
    const state = this.choice(event.choice);
    let frames = '';
    if (state.filter !== undefined) {
      frames = state.started
        ? this.filterChunk(event.choice, state)
        : this.roleChunk(event.choice, state, this.takeFilter(state));
    }
    state.filter = json;
    return state.finished ? frames + this.filterChunk(event.choice, state) : frames;
  }

  private filterChunk(choice: number, state: ChoiceState): string {
    const choiceJson = `{"index":${choice},"delta":{},"logprobs":null,"finish_reason":null${this.takeFilter(state)}}`;
    return this.frame(choiceJson, this.flatFields({ type: 'content', data: '' }));
  }

  /** The held verdicts of a choice as the field its next chunk carries (`,"content_filter_results":…`), once. */
  private takeFilter(state: ChoiceState): string {
    const json = state.filter;
    if (json === undefined) return '';
    state.filter = undefined;
    return `,"content_filter_results":${json}`;
  }

  private toolCallStart(event: Extract<CanonicalEvent, { type: 'tool-call-start' }>): string {
    const state = this.choice(event.choice);
    const index = state.toolIndex?.size ?? 0;
    (state.toolIndex ??= new Map()).set(event.index, index);
    const call = `{"index":${index},"id":${JSON.stringify(event.id)},"type":"function","function":{"name":${JSON.stringify(event.name)},"arguments":""}}`;
    return this.delta(event.choice, `${this.toolCallsOpen}${call}]}`, 'null', { type: 'tool_call', data: '' });
  }

  private toolCallDelta(event: Extract<CanonicalEvent, { type: 'tool-call-delta' }>): string {
    const index = this.choice(event.choice).toolIndex?.get(event.index);
    if (index === undefined || event.arguments === '') return '';
    const call = `{"index":${index},"function":{"arguments":${JSON.stringify(event.arguments)}}}`;
    return this.delta(event.choice, `${this.toolCallsOpen}${call}]}`, 'null', { type: 'tool_call', data: event.arguments });
  }

  /**
   * The usage when the client gets usage, else nothing: a chunk of its own (empty `choices`), or
   * on the last finish chunk where the profile puts it there (a stream that failed before its
   * finish still gets it, on a chunk of its own).
   */
  usageFrame(usage: Usage | null, costUsd?: number): string {
    if (!this.options.includeUsage || !usage || this.accounting) return this.releaseFinishes('');
    const body: Record<string, unknown> = { ...toOpenAIUsage(usage) };
    if (this.options.usageExtensions) {
      body.cost_usd = costUsd ?? 0;
      body.estimated = usage.source === 'estimated';
    }
    const json = JSON.stringify(body);
    if (this.heldFinishes?.length) return this.releaseFinishes(json);
    return dataFrame(`${this.getPrefix()}"choices":[],"usage":${json}}`);
  }

  /** The held finish chunks, the last with `usageJson` when given. */
  private releaseFinishes(usageJson: string): string {
    const held = this.heldFinishes;
    if (!held?.length) return '';
    this.heldFinishes = [];
    let frames = '';
    for (let i = 0; i < held.length; i++) {
      frames +=
        i === held.length - 1 && usageJson
          ? `data: ${this.getPrefix()}"choices":[${held[i]}],"usage":${usageJson}}\n\n`
          : this.frame(held[i], '');
    }
    return frames;
  }

  /**
   * The error frame: `{"error":{message,type,code}}` with what the upstream said in `upstream`
   * (errors/render.ts). The accounting profile's is flat (reference/accounting-events.txt), with
   * sluice's `code`, the upstream's `upstream`, and the usage so far when given, in usage_final's
   * fields: that profile sends no usage_final on a failure.
   */
  errorFrame(error: GatewayError, soFar?: UsageSoFar): string {
    if (this.accounting) {
      // The profile's finish vocabulary has `error` (reference/accounting-events.txt): every choice
      // the failure cut short finishes so, before the error frame.
      let finishes = '';
      this.choices.forEach((state, index) => {
        if (state.started && !state.finished) finishes += this.finishChunk(index, state, 'error');
      });
      const frame: Record<string, unknown> = {
        type: 'error',
        data: error.message,
        provider: this.provider,
        code: error.code,
      };
      const { upstream } = errorObject(error);
      if (upstream) frame.upstream = upstream;
      if (soFar) {
        frame.input_tokens = soFar.usage.inputTokens;
        frame.output_tokens = soFar.usage.outputTokens;
        frame.cost_usd = soFar.costUsd;
        frame.latency_ms = soFar.latencyMs;
        frame.estimated = soFar.usage.source === 'estimated';
      }
      return finishes + dataFrame(JSON.stringify(frame));
    }
    const json = renderStreamError(error, this.options.stream.errorType === 'upstream');
    // Finish chunks held for a usage that will not come (this is the last frame but [DONE]).
    const finishes = this.releaseFinishes('');
    return finishes + (this.options.stream.errorStyle === 'event' ? namedFrame('error', json) : dataFrame(json));
  }

  private choice(index: number): ChoiceState {
    let state = this.choices[index];
    if (!state) {
      // The index is written into every frame unquoted and sizes this array: decoders only emit
      // small integers (providers/upstream-schema.ts), so anything else is a sluice bug.
      if (!Number.isInteger(index) || index < 0 || index >= MAX_CHOICES) {
        throw new Error(`canonical event with an invalid choice index: ${String(index).slice(0, 40)}`);
      }
      state = { started: false, finished: false, toolIndex: undefined, filter: undefined };
      this.choices[index] = state;
    }
    return state;
  }

  /** `reason`: a canonical finish reason, or the accounting profile's `error`. */
  private finishChunk(choice: number, state: ChoiceState, reason: FinishReason | 'error'): string {
    state.finished = true;
    const choiceJson = `{"index":${choice},"delta":{},"logprobs":null,"finish_reason":"${reason}"${this.takeFilter(state)}}`;
    if (this.heldFinishes) {
      this.heldFinishes.push(choiceJson);
      return '';
    }
    return this.frame(
      choiceJson,
      this.accounting ? `"type":"finish","provider":${this.providerJson},"finish_reason":"${reason}",` : '',
    );
  }

  private delta(choice: number, delta: string, logprobsJson: string, flat: Flat): string {
    const state = this.choice(choice);
    if (state.finished) return '';
    const role = this.roleChunk(choice, state);
    const choiceJson = `{"index":${choice},"delta":${delta},"logprobs":${logprobsJson},"finish_reason":null${this.takeFilter(state)}}`;
    return `${role}${this.frame(choiceJson, this.flatFields(flat))}`;
  }

  /**
   * The role chunk of choice 0 when no choice has started: a vendor event before the first delta
   * must not come before it (the stream's first chunk announces the assistant turn).
   */
  private openTurn(): string {
    for (const state of this.choices) if (state?.started) return '';
    return this.roleChunk(0, this.choice(0));
  }

  /** `filter`: held verdicts that had no delta of their own (takeFilter's field), else none. */
  private roleChunk(choice: number, state: ChoiceState, filter = ''): string {
    if (state.started) return '';
    state.started = true;
    const choiceJson = `{"index":${choice},"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null${filter}}`;
    return this.frame(choiceJson, this.flatFields({ type: 'content', data: '' }));
  }

  private flatFields(flat: Flat): string {
    if (!this.accounting) return '';
    return `"type":"${flat.type}","data":${JSON.stringify(flat.data)},"provider":${this.providerJson},`;
  }

  private frame(choiceJson: string, flat: string): string {
    return `data: ${this.getPrefix()}${flat}"choices":[${choiceJson}${this.suffix}\n\n`;
  }

  private getPrefix(): string {
    if (this.prefix === undefined) {
      const o = this.options;
      // Joined rather than concatenated: a concatenation is a tree of ~15 string nodes (~500
      // bytes a stream, held for its life: measured in the soak's heap); join makes one flat string.
      this.prefix = [
        `{"id":${JSON.stringify(o.id)},"object":"chat.completion.chunk","created":${o.created},`,
        `"model":${JSON.stringify(o.model)},"service_tier":${JSON.stringify(this.serviceTier)},`,
        `"system_fingerprint":${JSON.stringify(this.systemFingerprint)},`,
      ].join('');
    }
    return this.prefix;
  }
}

function logprobs(tokens: TokenLogprob[] | undefined, kind: 'content' | 'refusal'): string {
  if (!tokens) return 'null';
  const list = JSON.stringify(tokens);
  return kind === 'content' ? `{"content":${list},"refusal":null}` : `{"content":null,"refusal":${list}}`;
}

/** The vendor event's `data:` line(s) as the upstream sent them (JSON spread over lines stays so). */
function vendorFrame(data: string): string {
  return `${data
    .split('\n')
    .map((line) => `data: ${line}`)
    .join('\n')}\n\n`;
}
