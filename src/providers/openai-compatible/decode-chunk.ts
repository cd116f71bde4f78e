import { randomBytes } from 'node:crypto';
import { errors } from '../../errors/catalog.ts';
import type { CanonicalEvent, TokenLogprob } from '../../protocol/canonical/events.ts';
import { normalizeFinishReason } from '../../protocol/canonical/finish-reason.ts';
import { checkPayload } from '../upstream-schema.ts';
import {
  type Chunk,
  type ChunkAnnotation,
  type ChunkChoice,
  type ChunkToolCall,
  type ContentPart,
  chunkSchema,
} from './chunk-schema.ts';
import { commonChunk } from './common-chunk.ts';
import { convertOpenAIFamilyUsage } from './convert-usage.ts';
import { ThinkTagSplitter } from './split-think-tags.ts';
import { failedGenerationError, streamErrorFrom } from './stream-error.ts';

/** A choice's delta, or a whole message's choice read as one (`message`). */
type ChunkDelta = NonNullable<ChunkChoice['delta']>;

interface CallSlot {
  id: string;
  index: number;
}

interface ChoiceState {
  /**
   * Upstream index (or id, for Mistral which sends none) -> the canonical call slot. Made at the
   * first tool call: most streams have none, and an empty Map is ~180 bytes held for the stream's life.
   */
  calls: Map<number | string, CallSlot> | undefined;
  lastCall: CallSlot | undefined;
  finished: boolean;
  splitter: ThinkTagSplitter | undefined;
}

export interface ChunkDecoderOptions {
  provider: string;
  /** Move `<think>` tag content to reasoning instead of keeping it in the text. */
  splitThinkTags: boolean;
}

/**
 * Turns OpenAI-family chunk objects (streamed deltas or a whole response's messages) into
 * canonical events, absorbing each vendor's variant:
 * - `reasoning_content` (DeepSeek, xAI, Qwen) and `reasoning` (Ollama, Groq, OpenRouter);
 * - Mistral's typed content arrays with `thinking` parts, and tool calls without `index`;
 * - usage in `x_groq.usage` (Groq), in the last content chunk (Mistral, DeepSeek beta), or alone;
 * - an `error` object inside a chunk (OpenRouter); Azure's content filter verdicts (passed on as
 *   content-filter events), its first chunk's empty `choices`;
 * - several tool calls sent with the same index but different ids (a known upstream bug).
 */
export class ChunkDecoder {
  private readonly options: ChunkDecoderOptions;
  private readonly choices: ChoiceState[] = [];
  private started = false;
  private broken = false;
  /** A choice of the chunk being decoded finished with `error` (its error event follows the chunk's choices). */
  private generationFailed = false;
  private nextCallIndex = 0;

  constructor(options: ChunkDecoderOptions) {
    this.options = options;
  }

  /** True once a chunk failed validation: the rest of the stream must be ignored. */
  get failed(): boolean {
    return this.broken;
  }

  /** One parsed chunk (or whole response); a chunk that fails the schema becomes an error event. */
  decode(raw: unknown, out: CanonicalEvent[]): void {
    if (this.broken) return;
    // The usual chunk is checked by hand; every other goes through the schema (common-chunk.ts).
    let chunk = commonChunk(raw);
    if (chunk === undefined) {
      const checked = checkPayload(chunkSchema, raw, this.options.provider, 'chunk');
      if (!checked.ok) {
        this.broken = true;
        out.push({ type: 'error', error: checked.error });
        return;
      }
      chunk = checked.value;
    }
    this.decodeChecked(chunk, out);
  }

  /** A chunk that passed the checks: its events. */
  decodeChecked(chunk: Chunk, out: CanonicalEvent[]): void {
    if (!this.started) {
      this.started = true;
      out.push({
        type: 'start',
        upstreamId: chunk.id,
        upstreamModel: chunk.model,
        systemFingerprint: chunk.system_fingerprint ?? null,
        serviceTier: chunk.service_tier ?? null,
      });
    }
    if (chunk.prompt_filter_results) out.push({ type: 'content-filter', choice: null, results: chunk.prompt_filter_results });
    const choices = chunk.choices;
    if (choices) for (const choice of choices) if (!this.broken) this.decodeChoice(choice, out);
    if (this.broken) return;
    const usage = chunk.usage ?? chunk.x_groq?.usage;
    if (usage) out.push({ type: 'usage', usage: convertOpenAIFamilyUsage(usage) });
    if (chunk.error) out.push({ type: 'error', error: streamErrorFrom(this.options.provider, chunk) });
    else if (this.generationFailed) out.push({ type: 'error', error: failedGenerationError(this.options.provider) });
    this.generationFailed = false;
  }

  /**
   * A chunk that textOnlyChunk read without parsing: its one text event for choice 0, as
   * decodeChecked gives it for such a chunk. False before the stream's first chunk (whose id and
   * model make the start event) and once broken: the caller then parses the chunk.
   */
  decodeText(text: string, out: CanonicalEvent[]): boolean {
    if (!this.started || this.broken) return false;
    this.text(0, this.state(0), text, undefined, out);
    return true;
  }

  /** Flushes held-back partial think tags. */
  end(out: CanonicalEvent[]): void {
    if (this.broken) return;
    this.choices.forEach((state, choice) => {
      if (state?.splitter) this.emitSegments(choice, state.splitter.end(), out);
    });
  }

  private state(choice: number): ChoiceState {
    let s = this.choices[choice];
    if (!s) {
      s = {
        calls: undefined,
        lastCall: undefined,
        finished: false,
        splitter: this.options.splitThinkTags ? new ThinkTagSplitter() : undefined,
      };
      this.choices[choice] = s;
    }
    return s;
  }

  private decodeChoice(c: ChunkChoice, out: CanonicalEvent[]): void {
    const choice = c.index ?? 0;
    const state = this.state(choice);
    // Before the delta it judged: the chat surface puts it on the chunk that carries that delta.
    if (c.content_filter_results) out.push({ type: 'content-filter', choice, results: c.content_filter_results });
    const delta = c.delta ?? c.message;
    if (delta) {
      this.decodeDelta(choice, state, c, delta, out);
      if (this.broken) return;
    }
    if (c.finish_reason && !state.finished) this.finishChoice(choice, state, c.finish_reason, out);
  }

  private decodeDelta(choice: number, state: ChoiceState, c: ChunkChoice, delta: ChunkDelta, out: CanonicalEvent[]): void {
    const reasoning = delta.reasoning_content || delta.reasoning;
    if (reasoning) out.push({ type: 'reasoning', choice, text: reasoning });
    const content = delta.content;
    if (typeof content === 'string') {
      if (content) this.text(choice, state, content, c.logprobs?.content ?? undefined, out);
    } else if (Array.isArray(content)) {
      this.contentParts(choice, state, content, out);
    }
    if (delta.refusal) {
      out.push({ type: 'refusal', choice, text: delta.refusal, logprobs: nonEmpty(c.logprobs?.refusal) });
    }
    if (delta.tool_calls) for (const call of delta.tool_calls) this.toolCall(choice, state, call, out);
    if (this.broken) return;
    if (delta.annotations) for (const a of delta.annotations) annotation(choice, a, out);
  }

  private finishChoice(choice: number, state: ChoiceState, finishReason: string, out: CanonicalEvent[]): void {
    state.finished = true;
    // Text held back as a possible `<think>` tag is the choice's last text: after the finish it would be dropped.
    if (state.splitter) this.emitSegments(choice, state.splitter.end(), out);
    // The generation failed: the chunk's error (or one saying so) ends the stream, no finish.
    if (finishReason === 'error') {
      this.generationFailed = true;
      return;
    }
    let reason = normalizeFinishReason(finishReason);
    // Some servers finish a tool-calling turn with "stop"; clients key their tool loop on tool_calls.
    if (reason === 'stop' && state.calls !== undefined) reason = 'tool_calls';
    out.push({ type: 'finish', choice, reason, rawReason: finishReason });
  }

  private text(
    choice: number,
    state: ChoiceState,
    text: string,
    logprobs: TokenLogprob[] | undefined,
    out: CanonicalEvent[],
  ): void {
    if (state.splitter) {
      this.emitSegments(choice, state.splitter.push(text), out);
      return;
    }
    out.push({ type: 'text', choice, text, logprobs: nonEmpty(logprobs) });
  }

  private emitSegments(choice: number, segments: { reasoning: boolean; text: string }[], out: CanonicalEvent[]): void {
    for (const s of segments) out.push({ type: s.reasoning ? 'reasoning' : 'text', choice, text: s.text });
  }

  /** Mistral: `[{type:"thinking", thinking:[{type:"text", text}]}, {type:"text", text}]`. */
  private contentParts(choice: number, state: ChoiceState, parts: ContentPart[], out: CanonicalEvent[]): void {
    for (const part of parts) {
      if (part.type === 'thinking') {
        const text = flattenText(part.thinking);
        if (text) out.push({ type: 'reasoning', choice, text });
      } else if (part.text) {
        this.text(choice, state, part.text, undefined, out);
      }
    }
  }

  private toolCall(choice: number, state: ChoiceState, call: ChunkToolCall, out: CanonicalEvent[]): void {
    if (this.broken) return;
    const id = call.id || undefined;
    let slot: CallSlot | undefined;
    if (call.index !== undefined && call.index !== null) {
      slot = state.calls?.get(call.index);
      if (slot && id && slot.id !== id) slot = undefined; // same index, new id: a new call
    } else if (id) {
      slot = state.calls?.get(id);
    } else {
      slot = state.lastCall;
    }
    if (!slot) {
      // A call without a name cannot be answered (the client has no tool to run): the stream is broken.
      const name = call.function?.name;
      if (!name) {
        this.broken = true;
        out.push({ type: 'error', error: errors.malformed(this.options.provider, 'tool call without a function name') });
        return;
      }
      slot = { id: id ?? generateCallId(), index: this.nextCallIndex++ };
      (state.calls ??= new Map()).set(call.index ?? slot.id, slot);
      out.push({ type: 'tool-call-start', choice, index: slot.index, id: slot.id, name });
    }
    state.lastCall = slot;
    const args = call.function?.arguments;
    if (args) out.push({ type: 'tool-call-delta', choice, index: slot.index, arguments: args });
  }
}

/** url_citation annotations (web search: OpenAI search models, OpenRouter); other kinds are not kept. */
function annotation(choice: number, a: ChunkAnnotation, out: CanonicalEvent[]): void {
  const c = a.url_citation;
  if (a.type !== 'url_citation' || !c || typeof c.url !== 'string') return;
  out.push({
    type: 'annotation',
    choice,
    annotation: {
      type: 'url_citation',
      url: c.url,
      title: c.title ?? '',
      startIndex: c.start_index ?? 0,
      endIndex: c.end_index ?? 0,
      ...(typeof c.content === 'string' ? { content: c.content } : {}),
    },
  });
}

function flattenText(value: ContentPart['thinking']): string {
  if (typeof value === 'string') return value;
  if (!value) return '';
  let text = '';
  for (const p of value) if (p.text) text += p.text;
  return text;
}

function nonEmpty(list: TokenLogprob[] | null | undefined): TokenLogprob[] | undefined {
  return list && list.length > 0 ? list : undefined;
}

/** Only for providers that send a call without an id; upstream ids always pass through unchanged. */
export function generateCallId(): string {
  return `call_${randomBytes(12).toString('base64url')}`;
}
