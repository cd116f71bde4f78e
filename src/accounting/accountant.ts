import type { GatewayError } from '../errors/gateway-error.ts';
import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import { isOutputEvent } from '../protocol/canonical/events.ts';
import type { Usage } from '../protocol/canonical/usage.ts';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import { countPromptTokens, promptText, textTally } from './count-tokens.ts';
import type { AdmittedRequest, RequestHolds, RequestProgress } from './journal-entries.ts';
import { type LedgerRecord, NO_USAGE } from './ledger-record.ts';
import type { PricingRegistry } from './pricing.ts';
import type { TallyLimits, TokenTally } from './token-tally.ts';

/** A request's input tokens counted locally, for the model the request is on now. */
export type CountInput = (model: string, signal?: AbortSignal, limits?: TallyLimits) => Promise<number>;

export interface AccountantInit {
  requestId: string;
  keyId: string | null;
  /** The caller's project (null or absent: the master key). */
  projectId?: string | null;
  provider: string;
  model: string;
  requestedModel: string;
  surface: LedgerRecord['surface'];
  streamed: boolean;
  request: CanonicalRequest;
  pricing: PricingRegistry;
  /** Keep prompt and completion text in the record, capped at this many characters (0: never). */
  storeContentChars: number;
  /** Told every event too: the request trace's record of the output, when it captures content. */
  transcript?: { observe(event: CanonicalEvent): void };
  now?: () => number;
  /** The budget of local counts (token-tally.ts: DEFAULT_LIMITS); tests widen the wait. */
  countLimits?: TallyLimits;
  /** How the input is counted when it is not a chat prompt (embeddings); else as `request`'s chat prompt. */
  countInput?: CountInput /**
   * The answer is replayed from the response cache (src/cache): it costs nothing, in its frames
   * and its record, which names what it would have cost instead (`cacheSavedUsd`).
   */;
  fromCache?: boolean;
}

/**
 * One per request: watches the canonical stream (usage is a by-product of decoding, so it cannot
 * be forgotten) and produces the ledger record in the pipeline's `finally`, however it ended.
 */
export class Accountant {
  readonly startedAt: number;
  private init: AccountantInit;
  private readonly now: () => number;
  private firstOutputAt: number | null = null;
  private reported: Usage | null = null;
  /** The usage reported before the first output event (Anthropic's message_start), if any. */
  private reportedBeforeOutput: Usage | null = null;
  private finishReason: string | null = null;
  /**
   * The output's tokens, counted as they arrive (a long output ahead of its end), for when the
   * upstream reports no usage: the end of a stream only counts the last piece.
   */
  private output: TokenTally;
  /** The first storeContentChars characters of the output, for the record. */
  private completion = '';
  private promptEstimate: Promise<number> | undefined;
  private settled: Usage | undefined;
  private acknowledged = false;
  private costed: { usage: Usage; costUsd: number; priceKnown: boolean; savedUsd: number } | undefined;
  /** Events seen (and acknowledgements): progress() is read again only when it moved. */
  private changes = 0;
  private lastProgress: { changes: number; progress: RequestProgress } | undefined;

  constructor(init: AccountantInit) {
    this.init = init;
    this.now = init.now ?? Date.now;
    this.startedAt = this.now();
    this.output = textTally(init.model, init.countLimits);
  }

  observe(event: CanonicalEvent): void {
    this.changes++;
    this.init.transcript?.observe(event);
    if (this.firstOutputAt === null && isOutputEvent(event)) {
      this.firstOutputAt = this.now();
      this.reportedBeforeOutput = this.reported;
    }
    switch (event.type) {
      case 'text':
      case 'reasoning':
      case 'refusal':
        this.addOutput(event.text);
        break;
      case 'tool-call-start':
        this.addOutput(event.name);
        break;
      case 'tool-call-delta':
        this.addOutput(event.arguments);
        break;
      case 'mcp':
        // A call of an MCP tool sluice runs is the model's output all the same.
        if (event.step.kind === 'call-start') this.addOutput(event.step.name);
        else if (event.step.kind === 'call-arguments') this.addOutput(event.step.delta);
        break;
      case 'finish':
        this.finishReason ??= event.reason;
        break;
      case 'usage':
        this.reported = event.usage;
        break;
      case 'fallback':
        this.retarget(event.to.provider, event.to.model);
        break;
    }
  }

  /**
   * Routing moved the request to another target before any output (src/routing): the record, the
   * price and the counts are the new target's. Nothing of the abandoned attempt was observed.
   */
  private retarget(provider: string, model: string): void {
    if (this.init.provider === provider && this.init.model === model) return;
    this.init = { ...this.init, provider, model };
    this.output.close();
    this.output = textTally(model, this.init.countLimits);
    this.promptEstimate = undefined;
  }

  private addOutput(text: string): void {
    if (!text) return;
    this.output.add(text);
    const room = this.init.storeContentChars - this.completion.length;
    if (room > 0) this.completion += text.length > room ? text.slice(0, room) : text;
  }

  get requestId(): string {
    return this.init.requestId;
  }

  private owner(): RecordOwner {
    return { keyId: this.init.keyId, projectId: this.init.projectId ?? null };
  }

  /**
   * The first of an answer that is no text (an image, audio bytes, a transcript sent whole)
   * reached the client: its time to first output, which text events mark themselves.
   */
  outputStarted(): void {
    if (this.firstOutputAt !== null) return;
    this.changes++;
    this.firstOutputAt = this.now();
    this.reportedBeforeOutput = this.reported;
  }

  /** The upstream answered 2xx (its status, if a later failure does not carry one). */
  markAcknowledged(): void {
    this.acknowledged = true;
    this.changes++;
  }

  /** The request as the durable journal records its admission (store/ledger-journal.ts). */
  admitted(promptTokens: number, holds: RequestHolds | undefined): AdmittedRequest {
    const i = this.init;
    return {
      requestId: i.requestId,
      createdAt: this.startedAt,
      ...this.owner(),
      provider: i.provider,
      model: i.model,
      requestedModel: i.requestedModel,
      surface: i.surface,
      streamed: i.streamed,
      promptTokens,
      ...(holds ? { holds } : {}),
    };
  }

  /**
   * How far the request got, for the durable journal (read at most once a second): the same
   * object while nothing happened, so that an unchanged request writes no line.
   */
  progress(): RequestProgress {
    if (this.lastProgress?.changes === this.changes) return this.lastProgress.progress;
    const progress: RequestProgress = {
      requestId: this.init.requestId,
      at: this.now(),
      provider: this.init.provider,
      model: this.init.model,
      acknowledged: this.acknowledged,
      firstOutputAt: this.firstOutputAt,
      outputTokens: this.output.soFar(),
      reported: this.reported,
    };
    this.lastProgress = { changes: this.changes, progress };
    return progress;
  }

  /** The target the request is on now: routing may have moved it before any output (retarget). */
  get target(): { provider: string; model: string } {
    return { provider: this.init.provider, model: this.init.model };
  }

  /** The usage the upstream reported so far (it may still grow), or null. */
  get reportedUsage(): Usage | null {
    return this.reported;
  }

  /**
   * Input tokens known before the first token (usage_start): reported if the upstream said so
   * before its first output, else counted. Usage that arrives later (an OpenAI usage chunk read in
   * the same network read as the first token) does not count, so the figure depends on the order
   * of events, never on how the bytes were split.
   */
  async inputTokens(signal?: AbortSignal): Promise<number> {
    return (await this.startInput(signal)).tokens;
  }

  /**
   * inputTokens, and whether it is sluice's own count (`estimated`): usage_start goes out when the
   * upstream accepts the request, usually before it reported any usage, so it says which it is.
   */
  async startInput(signal?: AbortSignal): Promise<{ tokens: number; estimated: boolean }> {
    const early = this.firstOutputAt === null ? this.reported : this.reportedBeforeOutput;
    if (early && early.inputTokens > 0) return { tokens: early.inputTokens, estimated: false };
    return { tokens: await this.countedInput(signal), estimated: true };
  }

  /** Counted once: the figure of usage_start is the figure of the final usage. */
  private countedInput(signal?: AbortSignal): Promise<number> {
    const { countInput, request, model, countLimits } = this.init;
    this.promptEstimate ??= countInput
      ? countInput(model, signal, countLimits)
      : countPromptTokens(request, model, signal, countLimits);
    return this.promptEstimate;
  }

  /**
   * Final usage: the provider's when it reported any, else counted locally and marked estimated.
   * A local count waits at most ~1 s for the counting worker, and never past `signal` (the
   * request's deadline): what is not counted by then is estimated (token-tally.ts).
   */
  async usage(signal?: AbortSignal): Promise<Usage> {
    if (this.settled) return this.settled;
    if (this.reported) {
      this.settled = this.finishReason === null ? await this.completedByCount(this.reported, signal) : this.reported;
      return this.settled;
    }
    const [input, output] = await Promise.all([this.countedInput(signal), this.output.total(signal)]);
    this.settled = { inputTokens: input, outputTokens: output, source: 'estimated' };
    return this.settled;
  }

  /**
   * A stream that never finished may have reported usage only so far: Anthropic's message_start
   * says output_tokens: 1, and the final count comes with the finish. When the output that did
   * arrive counts more, the record takes that count and says estimated.
   */
  private async completedByCount(reported: Usage, signal?: AbortSignal): Promise<Usage> {
    const counted = await this.output.total(signal);
    return counted > reported.outputTokens ? { ...reported, outputTokens: counted, source: 'estimated' } : reported;
  }

  /**
   * The usage of a request that failed, as its record will say: nothing when the upstream never
   * accepted the request (a 4xx/5xx, or never reached, consumed and bills nothing: charging the
   * counted prompt would overstate the spend of every 429), else the final usage so far.
   */
  failedUsage(signal?: AbortSignal): Promise<Usage> {
    return this.acknowledged ? this.usage(signal) : Promise.resolve({ inputTokens: 0, outputTokens: 0, source: 'provider' });
  }

  /** Cost of the final usage (computed once: the stream's last frame and the record share it). */
  cost(usage: Usage): { costUsd: number; priceKnown: boolean; savedUsd: number } {
    if (this.costed && this.costed.usage === usage) return this.costed;
    const { costUsd, priceKnown } = this.init.pricing.cost(this.init.provider, this.init.model, usage);
    this.costed = this.init.fromCache
      ? { usage, costUsd: 0, priceKnown, savedUsd: costUsd }
      : { usage, costUsd, priceKnown, savedUsd: 0 };
    return this.costed;
  }

  /**
   * The record when the usage could not be settled (a counting failure): the request's identity,
   * the failure, and the usage the upstream reported, if any, marked estimated.
   */
  unsettledRecord(error: GatewayError): LedgerRecord {
    const usage = this.reported ?? { inputTokens: 0, outputTokens: 0, source: 'estimated' as const };
    return {
      ...rejectedRecord(
        this.init.requestId,
        error,
        this.init.surface,
        this.init.requestedModel,
        this.startedAt,
        this.owner(),
        this.now(),
      ),
      provider: this.init.provider,
      model: this.init.model,
      streamed: this.init.streamed,
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      usageSource: 'estimated',
      priceKnown: false,
      ttftMs: this.ttftMs(),
      upstreamStatus: this.upstreamStatus(error),
      outcome: outcomeOf(error),
      finishReason: this.finishReason,
    };
  }

  async finalize(error: GatewayError | null): Promise<LedgerRecord> {
    const end = this.now();
    const usage = error ? await this.failedUsage() : await this.usage();
    // Whatever of the output is still in the counting line is not needed any more.
    this.output.close();
    const { costUsd, priceKnown, savedUsd } = this.cost(usage);
    const cap = this.init.storeContentChars;
    return {
      requestId: this.init.requestId,
      createdAt: this.startedAt,
      ...this.owner(),
      provider: this.init.provider,
      model: this.init.model,
      requestedModel: this.init.requestedModel,
      surface: this.init.surface,
      streamed: this.init.streamed,
      inputTokens: usage.inputTokens,
      cachedInputTokens: usage.cachedInputTokens ?? 0,
      cacheWriteTokens: usage.cacheWriteTokens ?? 0,
      outputTokens: usage.outputTokens,
      reasoningTokens: usage.reasoningTokens ?? 0,
      audioInputTokens: usage.audioInputTokens ?? null,
      audioOutputTokens: usage.audioOutputTokens ?? null,
      acceptedPredictionTokens: usage.acceptedPredictionTokens ?? null,
      rejectedPredictionTokens: usage.rejectedPredictionTokens ?? null,
      usageSource: usage.source,
      costUsd,
      priceKnown,
      ttftMs: this.ttftMs(),
      latencyMs: end - this.startedAt,
      upstreamStatus: this.upstreamStatus(error),
      outcome: outcomeOf(error),
      ...errorColumns(error),
      finishReason: this.finishReason,
      prompt: cap > 0 ? promptText(this.init.request).join('\n').slice(0, cap) : null,
      completion: cap > 0 ? this.completion : null,
      ...(this.init.fromCache && { cacheSavedUsd: savedUsd }),
    };
  }

  private ttftMs(): number | null {
    return this.firstOutputAt === null ? null : this.firstOutputAt - this.startedAt;
  }

  /** The upstream's HTTP status: the error's, else 200 once it accepted the request, else none (never reached). */
  private upstreamStatus(error: GatewayError | null): number | null {
    return error?.upstreamStatus ?? (this.acknowledged ? 200 : null);
  }
}

type ErrorColumns = Pick<LedgerRecord, 'errorType' | 'errorCode' | 'upstreamErrorType' | 'upstreamErrorCode' | 'errorMessage'>;

/** The columns of a request without an error: one object for every such record. */
const NO_ERROR: ErrorColumns = Object.freeze({
  errorType: null,
  errorCode: null,
  upstreamErrorType: null,
  upstreamErrorCode: null,
  errorMessage: null,
});

function errorColumns(error: GatewayError | null): ErrorColumns {
  if (!error) return NO_ERROR;
  return {
    errorType: error.type,
    errorCode: error.code,
    upstreamErrorType: error.upstreamType ?? null,
    upstreamErrorCode: error.upstreamCode ?? null,
    errorMessage: error.message,
  };
}

function outcomeOf(error: GatewayError | null): LedgerRecord['outcome'] {
  if (!error) return 'ok';
  return error.type === 'cancelled' ? 'cancelled' : 'error';
}

/** Whose request a record is: the key and its project (both null for the master key). */
export type RecordOwner = Pick<LedgerRecord, 'keyId' | 'projectId'>;

const NO_OWNER: RecordOwner = { keyId: null, projectId: null };

/** The record of a request refused before it reached a provider (bad body, unknown model, ...). */
export function rejectedRecord(
  requestId: string,
  error: GatewayError,
  surface: LedgerRecord['surface'],
  requestedModel: string,
  startedAt: number,
  owner: RecordOwner = NO_OWNER,
  now = Date.now(),
): LedgerRecord {
  return {
    ...unsentRecord(requestId, surface, startedAt, owner, now),
    provider: '',
    model: '',
    requestedModel,
    streamed: false,
    outcome: 'error',
    errorType: error.type,
    errorCode: error.code,
    upstreamErrorType: error.upstreamType ?? null,
    upstreamErrorCode: error.upstreamCode ?? null,
    errorMessage: error.message,
  };
}

/** What the record of a request that never reached a provider holds, however it ended: nothing used, no upstream. */
function unsentRecord(requestId: string, surface: LedgerRecord['surface'], startedAt: number, owner: RecordOwner, now: number) {
  return {
    requestId,
    createdAt: startedAt,
    keyId: owner.keyId,
    projectId: owner.projectId,
    surface,
    ...NO_USAGE,
    ttftMs: null,
    latencyMs: now - startedAt,
    upstreamStatus: null,
    finishReason: null,
    prompt: null,
    completion: null,
  };
}

/**
 * The record of a dry run that was admitted (x-sluice-dry-run): the target it would have gone to,
 * nothing used, nothing spent, marked `dryRun` (a refused one is a rejectedRecord, marked the same).
 */
export function dryRunRecord(
  requestId: string,
  surface: LedgerRecord['surface'],
  target: { provider: string; model: string; requested: string },
  streamed: boolean,
  startedAt: number,
  owner: RecordOwner,
  now = Date.now(),
): LedgerRecord {
  return {
    ...unsentRecord(requestId, surface, startedAt, owner, now),
    provider: target.provider,
    model: target.model,
    requestedModel: target.requested,
    streamed,
    outcome: 'ok',
    errorType: null,
    errorCode: null,
    errorMessage: null,
    dryRun: true,
  };
}
