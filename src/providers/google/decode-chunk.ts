import { errors } from '../../errors/catalog.ts';
import type { GatewayError } from '../../errors/gateway-error.ts';
import type { CanonicalEvent, TokenLogprob } from '../../protocol/canonical/events.ts';
import { generateCallId } from '../openai-compatible/decode-chunk.ts';
import { mapGeminiFinishReason } from './finish-reason.ts';
import { convertGeminiLogprobs } from './logprobs.ts';
import { googleStreamError } from './map-error.ts';
import { PartialArgsAssembler } from './partial-args.ts';
import { checkPayload } from '../upstream-schema.ts';
import { type GeminiCandidate, type GeminiFunctionCall, type GeminiPart, geminiResponseSchema } from './payload.ts';
import { convertGeminiUsage } from './usage.ts';

export interface GeminiDecoderOptions {
  provider: string;
  /** Gemini sends no call ids (unless `functionCall.id` is set); tests pass a deterministic one. */
  newCallId?: () => string;
}

interface OpenCall {
  index: number;
  args: PartialArgsAssembler;
}

interface ChoiceState {
  /** A function call was seen in this candidate, in any chunk: STOP then means tool_calls. */
  sawToolCall: boolean;
  finished: boolean;
  /** A Vertex streamed call whose arguments are still arriving. */
  open: OpenCall | undefined;
}

/**
 * GenerateContentResponse objects (stream chunks, or a whole non-stream response) -> canonical
 * events. Each chunk carries complete parts: a thought summary, text, or a whole function call,
 * except Vertex's streamed calls, which are assembled across chunks.
 */
export class GeminiChunkDecoder {
  private readonly provider: string;
  private readonly newCallId: () => string;
  private readonly choices = new Map<number, ChoiceState>();
  private started = false;
  private nextCallIndex = 0;
  private lastUsage = '';
  private broken = false;

  constructor(options: GeminiDecoderOptions) {
    this.provider = options.provider;
    this.newCallId = options.newCallId ?? generateCallId;
  }

  /** True once an error event was emitted: the rest of the response must be ignored. */
  get failed(): boolean {
    return this.broken;
  }

  /** One parsed GenerateContentResponse; one that fails the schema becomes an error event. */
  decode(raw: unknown, out: CanonicalEvent[]): void {
    if (this.broken) return;
    if ((raw as { error?: unknown } | null)?.error) {
      this.fail(googleStreamError(this.provider, raw), out);
      return;
    }
    const checked = checkPayload(geminiResponseSchema, raw, this.provider, 'chunk');
    if (!checked.ok) {
      this.fail(checked.error, out);
      return;
    }
    const chunk = checked.value;
    if (!this.started) {
      this.started = true;
      out.push({ type: 'start', upstreamId: chunk.responseId, upstreamModel: chunk.modelVersion });
    }
    const candidates = chunk.candidates ?? [];
    candidates.forEach((c, position) => {
      if (!this.broken) this.candidate(c.index ?? position, c, out);
    });
    if (this.broken) return;
    // A blocked prompt has no candidates at all: the answer is an empty, filtered completion
    // (it stays a 200 with usage, like Gemini's own answer, rather than becoming an error).
    const blockReason = chunk.promptFeedback?.blockReason;
    if (candidates.length === 0 && blockReason) this.finish(0, this.state(0), 'content_filter', blockReason, out);
    const usage = chunk.usageMetadata ? convertGeminiUsage(chunk.usageMetadata) : undefined;
    if (usage) {
      // Every chunk repeats the running totals; only a change is news.
      const key = JSON.stringify(usage);
      if (key !== this.lastUsage) {
        this.lastUsage = key;
        out.push({ type: 'usage', usage });
      }
    }
  }

  /** Sends the arguments of a streamed call the upstream never closed. */
  end(out: CanonicalEvent[]): void {
    if (this.broken) return;
    for (const [choice, state] of this.choices) this.closeCall(choice, state, out);
  }

  private state(choice: number): ChoiceState {
    let s = this.choices.get(choice);
    if (!s) {
      s = { sawToolCall: false, finished: false, open: undefined };
      this.choices.set(choice, s);
    }
    return s;
  }

  private fail(error: GatewayError, out: CanonicalEvent[]): void {
    this.broken = true;
    out.push({ type: 'error', error });
  }

  private candidate(choice: number, c: GeminiCandidate, out: CanonicalEvent[]): void {
    const state = this.state(choice);
    if (state.finished) return;
    let logprobs = c.logprobsResult ? convertGeminiLogprobs(c.logprobsResult) : undefined;
    for (const part of c.content?.parts ?? []) {
      if (this.part(choice, state, part, logprobs, out)) logprobs = undefined;
      if (this.broken) return;
    }
    // Log probabilities of a chunk whose tokens were not text (rare) still reach the client.
    if (logprobs) out.push({ type: 'text', choice, text: '', logprobs });
    if (c.finishReason) this.finish(choice, state, undefined, c.finishReason, out);
  }

  /** Returns true when the part's text event took the chunk's log probabilities. */
  private part(
    choice: number,
    state: ChoiceState,
    part: GeminiPart,
    logprobs: TokenLogprob[] | undefined,
    out: CanonicalEvent[],
  ): boolean {
    const signature = part.thoughtSignature || undefined;
    if (part.thought) {
      if (part.text || signature) out.push({ type: 'reasoning', choice, text: part.text ?? '', ...(signature && { signature }) });
      return false;
    }
    // The signature rides on the first part after the thoughts (text, function call, or an
    // empty text part: reasoning-gemini3-pro.jsonl); it closes the reasoning, so it comes first.
    if (signature) out.push({ type: 'reasoning', choice, text: '', signature });
    let tookLogprobs = false;
    if (typeof part.text === 'string' && part.text !== '') {
      out.push({ type: 'text', choice, text: part.text, ...(logprobs && { logprobs }) });
      tookLogprobs = logprobs !== undefined;
    }
    if (part.functionCall) this.functionCall(choice, state, part.functionCall, out);
    return tookLogprobs;
  }

  private functionCall(choice: number, state: ChoiceState, call: GeminiFunctionCall, out: CanonicalEvent[]): void {
    // A streamed call continues in nameless parts and ends with one without willContinue (the
    // recording ends each call with `functionCall: {}`); a named part always starts a new call.
    if (state.open && !call.name) {
      this.addPartialArgs(state.open, call, out);
      if (!call.willContinue && !this.broken) this.closeCall(choice, state, out);
      return;
    }
    this.closeCall(choice, state, out);
    if (!call.name) return;
    const index = this.nextCallIndex++;
    state.sawToolCall = true;
    out.push({ type: 'tool-call-start', choice, index, id: call.id || this.newCallId(), name: call.name });
    if (call.willContinue) {
      state.open = { index, args: new PartialArgsAssembler() };
      this.addPartialArgs(state.open, call, out);
      return;
    }
    out.push({ type: 'tool-call-delta', choice, index, arguments: JSON.stringify(call.args ?? {}) });
  }

  private addPartialArgs(open: OpenCall, call: GeminiFunctionCall, out: CanonicalEvent[]): void {
    for (const arg of call.partialArgs ?? []) {
      const problem = open.args.add(arg);
      if (problem) {
        this.fail(errors.malformed(this.provider, problem), out);
        return;
      }
    }
  }

  private closeCall(choice: number, state: ChoiceState, out: CanonicalEvent[]): void {
    const open = state.open;
    if (!open) return;
    state.open = undefined;
    out.push({ type: 'tool-call-delta', choice, index: open.index, arguments: open.args.json() });
  }

  private finish(
    choice: number,
    state: ChoiceState,
    reason: 'content_filter' | undefined,
    raw: string,
    out: CanonicalEvent[],
  ): void {
    if (state.finished) return;
    this.closeCall(choice, state, out);
    state.finished = true;
    out.push({ type: 'finish', choice, reason: reason ?? mapGeminiFinishReason(raw, state.sawToolCall), rawReason: raw });
  }
}
