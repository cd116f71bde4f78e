import type { Accountant, CountInput } from '../accounting/accountant.ts';
import type { CacheSlot } from '../cache/response-cache.ts';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import type { MediaUnits } from '../protocol/canonical/usage.ts';
import type { ResolvedModel } from '../providers/registry.ts';
import type { AttemptLog } from '../routing/attempts.ts';
import type { Candidate } from '../routing/plan.ts';
import type { GenAiInput } from '../telemetry/genai-messages.ts';
import type { OutputTranscript } from '../telemetry/output-transcript.ts';
import type { Admission, Caller } from '../admission/admission.ts';
import type { PipelineContext } from './context.ts';
import type { Exchange } from './exchange.ts';
import type { RequestScope } from './request-scope.ts';

/**
 * One model endpoint of a client surface (chat completions, responses, ...): how its body is
 * parsed, how its errors look, and how it runs once the lifecycle has resolved, admitted and
 * accounted for it. A new surface is a new operation, never a new lifecycle.
 */
export interface ModelOperation {
  readonly surface: LedgerRecord['surface'];
  /** The surface's HTTP error body (OpenAI's error JSON for chat and responses). */
  renderError: (error: GatewayError) => string;
  /**
   * Validates the body; throws a 400 naming the field. The caller is authenticated by then: what
   * the request reads from the store (a previous response) is read in the caller's project.
   */
  parse(body: unknown, ctx: PipelineContext, caller: Caller): ParsedRequest;
}

export interface ParsedRequest {
  /** The model the client named (a route, an alias, provider/model or a bare model id). */
  model: string;
  /** The request's own fallbacks (OpenRouter's `models`), tried after the route's targets. */
  fallbacks?: readonly string[];
  /** What a sticky route hashes to pick a target (prompt_cache_key, else user). */
  stickyKey?: string;
  /** Builds the canonical request for the resolved target (a relayed surface may keep the body). */
  prepare(target: ResolvedModel, ctx: PipelineContext): Promise<PreparedRequest>;
}

export interface PreparedRequest {
  /** What the accountant counts and the admit step sees. */
  request: CanonicalRequest;
  streamed: boolean;
  /** The request deadline (0: none). */
  deadlineMs: number;
  /**
   * What a trace that captures content records as the input, when `request` is not it (a relayed
   * body goes upstream as sent): asked only then.
   */
  traceInput?: () => GenAiInput;
  /**
   * The input's tokens when it is not a chat prompt (embeddings: each input on its own, no chat
   * framing): the estimate the admission charges and reserves, and the count the record takes
   * when the provider reports none. Absent: `request`'s messages, counted as a chat prompt.
   */
  input?: { estimatedTokens: number; count: CountInput };
  /**
   * The run answers with canonical events (openRouted, completeEvents), which the response cache
   * keeps and replays; a relayed answer (the upstream's own bytes) is not cached.
   */
  cacheable?: boolean;
  /** The media units the request will be billed for, as far as its body tells: what the admission reserves besides tokens. */
  units?: MediaUnits;
  run(run: RunScope): Promise<GatewayError | null>;
}

/**
 * What a running request has: where to write, its scope, its accountant, its target (the first
 * candidate: what the client is answered as until routing falls back), every candidate in the order
 * they are tried, the log of their attempts, and its admission.
 */
export interface RunScope {
  exchange: Exchange;
  scope: RequestScope;
  accountant: Accountant;
  target: ResolvedModel;
  candidates: readonly Candidate[];
  attempts: AttemptLog;
  ctx: PipelineContext;
  admission: Admission;
  /** The trace's record of the output, when it captures content (a relayed answer hands it its items). */
  transcript?: OutputTranscript;
  /** The response cache's part: the answer to replay (a hit), or where the answer is kept (a miss). */
  cache: CacheSlot;
}
