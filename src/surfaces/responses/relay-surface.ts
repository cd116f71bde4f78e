import type { Accountant } from '../../accounting/accountant.ts';
import type { GatewayError } from '../../errors/gateway-error.ts';
import { errorObject } from '../../errors/render.ts';
import { upstreamHttpError } from '../../errors/upstream-error.ts';
import { normalizeTokenCounts, type Usage } from '../../protocol/canonical/usage.ts';
import { normalizeRelayedFrame } from './relay-grammar.ts';
import { responsesUsage } from './encode-response.ts';
import { returnedIds } from './stored-ids.ts';
import { dataFrame, namedFrame } from '../../protocol/sse/frames.ts';
import type { SseFrame } from '../../protocol/sse/parse-upstream.ts';
import type { RelayItem } from '../../providers/types.ts';
import { RelayOutput } from './relay-output.ts';
import type { StreamSurface } from '../../pipeline/run-stream.ts';

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

interface UpstreamUsage {
  input_tokens?: number;
  output_tokens?: number;
  input_tokens_details?: { cached_tokens?: number } | null;
  output_tokens_details?: { reasoning_tokens?: number } | null;
}

export function fromResponsesUsage(u: UpstreamUsage): Usage {
  const { counts, invalid } = normalizeTokenCounts({
    input_tokens: u.input_tokens,
    output_tokens: u.output_tokens,
    cached_tokens: u.input_tokens_details?.cached_tokens,
    reasoning_tokens: u.output_tokens_details?.reasoning_tokens,
  });
  const usage: Usage = {
    inputTokens: counts.input_tokens ?? 0,
    outputTokens: counts.output_tokens ?? 0,
    cachedInputTokens: counts.cached_tokens,
    reasoningTokens: counts.reasoning_tokens,
    source: 'provider',
  };
  if (invalid.length > 0) usage.invalid = invalid;
  return usage;
}

/**
 * Relays an upstream Responses stream frame for frame. Only the terminal events (and `error`)
 * are parsed: for usage, the final response (kept for GET /v1/responses/{id}), and failures,
 * which the upstream has already told the client, so sluice adds no frame of its own then.
 */
export class ResponsesRelaySurface implements StreamSurface<RelayItem> {
  failure: GatewayError | null = null;
  complete = false;
  /** Relayed frames are never held back: the upstream's end is its connection closing. */
  readonly ended = false;
  finalResponse: Record<string, unknown> | null = null;
  private readonly accountant: Accountant;
  /** The provider answering: the route's current target (a fallback moves it before any frame). */
  private readonly providerOf: () => string;
  private upstreamError: GatewayError | null = null;
  private terminalRelayed = false;
  /** Frames relayed: the upstream numbers its events by position, so the next sequence_number. */
  private relayed = 0;
  /** The response of response.created, for a response.failed of sluice's own. */
  private created: Record<string, unknown> | null = null;
  /** The output: for the accountant (a stream cut short is billed for it) and a budget stop. */
  private readonly output = new RelayOutput();
  /** The budget stopped the stream: the closing ends it as incomplete. */
  private stopping = false;
  /**
   * The upstream's terminal event when it carried no usage (`"usage":null` in OpenAI's
   * response.failed): held back, it goes out last with the usage so far, what the ledger records.
   */
  private unpriced: HeldTerminal | null = null;
  /** Told the ids of response.created as soon as it is relayed (the upstream stored the response then). */
  private readonly onCreated: ((ids: readonly string[]) => void) | undefined;

  constructor(accountant: Accountant, providerOf: () => string, onCreated?: (ids: readonly string[]) => void) {
    this.accountant = accountant;
    this.providerOf = providerOf;
    this.onCreated = onCreated;
  }

  /**
   * The ids the upstream handed out in the frames relayed after response.created told its own
   * (the response's and its conversation's): its output items', and any the terminal response adds.
   */
  laterIds(): string[] {
    const told = new Set(this.created ? returnedIds(this.created) : []);
    const ids = new Set(this.output.itemIds());
    if (this.finalResponse) for (const id of returnedIds(this.finalResponse)) ids.add(id);
    return [...ids].filter((id) => !told.has(id));
  }

  encode(item: RelayItem): string {
    if ('error' in item) {
      this.failure = item.error;
      return '';
    }
    if (item.frame.data === '[DONE]') return '';
    // The grammar the SDKs read (event line = type, sequence_number by one), even from an upstream that omits it.
    const { event: type, data } = normalizeRelayedFrame(item.frame, this.relayed);
    if (type === 'error' || (type && TERMINAL.has(type))) this.readTerminal(type, data);
    if (type === 'response.created') this.readCreated(data);
    if (type) this.followOutput(type, item.frame);
    this.relayed++;
    if (this.unpriced) return '';
    return type ? namedFrame(type, data) : dataFrame(data);
  }

  async opening(): Promise<string> {
    return '';
  }

  /** Output bytes of a read, asked while a budget watches the stream. */
  measure(items: readonly RelayItem[]): number {
    const frames = [];
    for (const item of items) if ('frame' in item) frames.push(item.frame);
    return this.output.measure(frames);
  }

  /** A budget stop: the closing ends the response as OpenAI ends one at max_output_tokens. */
  stop(): string {
    this.stopping = true;
    return '';
  }

  async closing(signal: AbortSignal): Promise<string> {
    const held = this.unpriced;
    if (held) return this.priced(held, await this.accountant.usage(signal));
    if (!this.stopping) return '';
    const start = this.relayed === 0 ? this.output.refusedStart.map((frame) => this.encode({ frame })).join('') : '';
    const usage = await this.accountant.usage(signal);
    const { frames, output } = this.output.close(this.emit);
    const response = {
      ...this.created,
      status: 'incomplete',
      error: null,
      incomplete_details: { reason: 'max_output_tokens' },
      output,
      usage: responsesUsage(usage),
    };
    this.complete = true;
    this.terminalRelayed = true;
    this.finalResponse = response;
    return start + frames + this.emit('response.incomplete', { response });
  }

  /** The accountant sees the output (a stream cut short is billed for it) and how the upstream ended it. */
  private followOutput(type: string, frame: SseFrame): void {
    const seen = this.output.follow(type, frame);
    if (seen) this.accountant.observe(seen);
    if (type === 'response.completed' || type === 'response.incomplete') {
      this.accountant.observe({ type: 'finish', choice: 0, reason: this.output.finishReason(type) });
    }
  }

  /** An event of sluice's own, numbered after the relayed ones. */
  private readonly emit = (type: string, fields: Record<string, unknown>): string =>
    namedFrame(type, JSON.stringify({ type, sequence_number: this.relayed++, ...fields }));

  /**
   * The stream broke before the upstream's terminal event: `error` (unless the upstream sent one)
   * then response.failed for the upstream's response, numbered after its events, as OpenAI ends a
   * failed stream (fixtures/openai-responses/failed-insufficient-quota.jsonl); the openai SDK raises
   * on `error`. Items the upstream left open are closed as incomplete before them. Either
   * response.failed carries the usage so far.
   */
  async failureFrames(error: GatewayError, signal: AbortSignal | undefined): Promise<string> {
    const held = this.unpriced;
    if (held) return this.priced(held, await this.accountant.failedUsage(signal));
    if (this.terminalRelayed) return '';
    return this.failedFrames(error, await this.accountant.failedUsage(signal));
  }

  errorFrames(error: GatewayError): string {
    if (this.unpriced) return this.priced(this.unpriced, null);
    if (this.terminalRelayed) return '';
    return this.failedFrames(error, null);
  }

  private failedFrames(error: GatewayError, usage: Usage | null): string {
    const reported = this.upstreamError ?? error;
    // The items the upstream left open are closed first, as incomplete: every `added` has its `done`.
    const { frames: closed, output } = this.output.close(this.emit);
    const frames = this.upstreamError ? '' : this.emit('error', { error: errorObject(error) });
    const response = {
      ...this.created,
      status: 'failed',
      error: { code: reported.code, message: reported.message },
      output,
      usage: usage ? responsesUsage(usage) : null,
    };
    return closed + frames + this.emit('response.failed', { response });
  }

  /** The held terminal event, with the usage so far in place of the upstream's null. */
  private priced(held: HeldTerminal, usage: Usage | null): string {
    const { type, body } = held;
    this.unpriced = null;
    const response = { ...body.response, usage: usage ? responsesUsage(usage) : null };
    this.finalResponse = response;
    return namedFrame(type, JSON.stringify({ ...body, response }));
  }

  private readCreated(data: string): void {
    try {
      this.created = (JSON.parse(data) as { response?: Record<string, unknown> }).response ?? null;
      if (this.created) this.onCreated?.(returnedIds(this.created));
    } catch {
      // An undecodable frame is relayed as it came; a failure frame then goes without the response.
    }
  }

  private readTerminal(type: string, data: string): void {
    let body: { response?: Record<string, unknown> & { usage?: UpstreamUsage; error?: UpstreamError }; error?: UpstreamError };
    try {
      body = JSON.parse(data);
    } catch {
      return;
    }
    const response = body.response;
    if (response?.usage) this.accountant.observe({ type: 'usage', usage: fromResponsesUsage(response.usage) });
    if (type === 'error') {
      // `error` comes before `response.failed` (fixtures/openai-responses/failed-insufficient-quota.jsonl):
      // relay on and let the terminal event end the stream.
      this.upstreamError = this.toError(body.error);
      return;
    }
    this.complete = true;
    this.terminalRelayed = true;
    this.finalResponse = response ?? null;
    if (response && !response.usage) this.unpriced = { type, body: { ...body, response } };
    if (type === 'response.failed') {
      this.failure =
        this.toError(response?.error) ??
        this.upstreamError ??
        upstreamHttpError({
          provider: this.providerOf(),
          status: 502,
          httpStatus: 200,
          message: `${this.providerOf()} reported response.failed.`,
        });
    }
  }

  private toError(err: UpstreamError | undefined): GatewayError | null {
    if (!err) return null;
    return upstreamHttpError({
      provider: this.providerOf(),
      status: 502,
      httpStatus: 200,
      message: err.message,
      upstreamCode: err.code,
    });
  }
}

type UpstreamError = { message?: string; code?: string | null };

/** A terminal event of the upstream's, parsed. */
type HeldTerminal = { type: string; body: { response: Record<string, unknown> } };
