import type { GatewayError } from '../../errors/gateway-error.ts';
import type { FinishReason } from './finish-reason.ts';
import type { Usage } from './usage.ts';

/** One token's log probability, in the OpenAI shape (which every provider that has them uses). */
export interface TokenLogprob {
  token: string;
  logprob: number;
  bytes: number[] | null;
  top_logprobs: { token: string; logprob: number; bytes: number[] | null }[];
}

/**
 * The canonical stream: what every provider decodes into and every client surface encodes from.
 * `choice` is the candidate index (n > 1); `index` on tool calls is the join key of one call.
 */
export type CanonicalEvent =
  | StartEvent
  | TextEvent
  | ReasoningEvent
  | RefusalEvent
  | AnnotationEvent
  | ToolCallStartEvent
  | ToolCallDeltaEvent
  | FinishEvent
  | UsageEvent
  | ErrorEvent
  | EndEvent
  | FallbackEvent
  | VendorEvent
  | McpEvent
  | ContentFilterEvent;

/** The upstream acknowledged the request. All fields optional: sluice fills its own id and model. */
export interface StartEvent {
  type: 'start';
  upstreamId?: string;
  upstreamModel?: string;
  systemFingerprint?: string | null;
  serviceTier?: string | null;
}

export interface TextEvent {
  type: 'text';
  choice: number;
  text: string;
  logprobs?: TokenLogprob[];
}

export interface ReasoningEvent {
  type: 'reasoning';
  choice: number;
  text: string;
  /** Provider signature that must travel back with the reasoning on the next turn. */
  signature?: string;
  /** Encrypted/redacted reasoning that must be kept but never shown as text. */
  redacted?: string;
}

export interface RefusalEvent {
  type: 'refusal';
  choice: number;
  text: string;
  logprobs?: TokenLogprob[];
}

/**
 * A source the answer cites (web search results), as OpenAI's `url_citation`: start and end are
 * character offsets into the choice's text (0 and 0 when a provider cites without placing it).
 */
export interface UrlCitation {
  type: 'url_citation';
  url: string;
  title: string;
  startIndex: number;
  endIndex: number;
  /** The cited excerpt, where the provider sends one (OpenRouter does). */
  content?: string;
}

export interface AnnotationEvent {
  type: 'annotation';
  choice: number;
  annotation: UrlCitation;
}

export interface ToolCallStartEvent {
  type: 'tool-call-start';
  choice: number;
  index: number;
  id: string;
  name: string;
}

export interface ToolCallDeltaEvent {
  type: 'tool-call-delta';
  choice: number;
  index: number;
  arguments: string;
}

export interface FinishEvent {
  type: 'finish';
  choice: number;
  reason: FinishReason;
  /** What the provider actually said, for the ledger and debugging. */
  rawReason?: string;
}

export interface UsageEvent {
  type: 'usage';
  usage: Usage;
}

/** A failure reported inside the stream (error event, error object, undecodable chunk). */
export interface ErrorEvent {
  type: 'error';
  error: GatewayError;
}

/**
 * The upstream marked the end of its stream (`data: [DONE]`): nothing follows, so what is left to
 * send can go out with the closing frames in one write.
 */
export interface EndEvent {
  type: 'end';
}

/** A target as the fallback event names it. */
export interface TargetName {
  provider: string;
  /** The provider-side model id. */
  model: string;
}

/**
 * Routing gave up on a target before any output and the stream now comes from another
 * (src/routing): comes before the new target's first event, so the accountant prices the target
 * finally used and the accounting profile announces the switch (`provider_fallback`).
 */
export interface FallbackEvent {
  type: 'fallback';
  from: TargetName;
  to: TargetName;
  /** Why the previous target was left (errors/fallback-policy.ts, or `ttft_timeout`). */
  reason: string;
}

/**
 * A vendor's own event inside a Chat Completions stream (a `data:` line whose JSON `type` starts
 * with `x_`: research steps, artifacts, chat metadata; reference/chat-streaming-full.txt), kept
 * as the upstream's JSON text so that a surface that passes it on sends the same bytes.
 */
export interface VendorEvent {
  type: 'vendor';
  data: string;
}

/** A tool of an MCP server as sluice listed it to the model (the server's own name). */
export interface McpListedTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/**
 * What sluice's MCP tool loop did between the model's steps (src/mcp/tool-loop.ts): the tools it
 * listed, each call the model made to one of them (its arguments as they streamed, then its
 * result), and a stop at `mcp.max_steps`. Never from a provider; surfaces render it as their API
 * reports hosted MCP calls (Responses' `mcp_call` items) or as sluice's extension (chat).
 */
export interface McpEvent {
  type: 'mcp';
  step: McpStep;
}

export type McpStep =
  | { kind: 'list-tools'; server: string; tools: McpListedTool[] }
  | { kind: 'call-start'; id: string; server: string; name: string }
  | { kind: 'call-arguments'; id: string; delta: string }
  /** The call ran (or was refused): its output, or its error; `arguments` as the model wrote them. */
  | {
      kind: 'call-done';
      id: string;
      server: string;
      name: string;
      arguments: string;
      output: string | null;
      error: string | null;
    }
  /** The model still called tools at the last step `mcp.max_steps` allows: the answer ends there. */
  | { kind: 'max-steps'; steps: number }
  /**
   * The model is called again with the conversation so far (`inputBytes` of JSON, the tools'
   * schemas included): a stream's budget watch holds it to the reservation before the call.
   */
  | { kind: 'next-step'; inputBytes: number };

/**
 * A content filter's verdicts as the upstream sent them (Azure OpenAI): the prompt's
 * (`prompt_filter_results`, `choice: null`) or a choice's (`content_filter_results`), passed on
 * to a client that reads them; they change nothing in the answer itself.
 */
export type ContentFilterEvent =
  | { type: 'content-filter'; choice: null; results: unknown[] }
  | { type: 'content-filter'; choice: number; results: Record<string, unknown> };

/** Events that carry model output (a call of an MCP tool too): the first of these is "the first token". */
export function isOutputEvent(event: CanonicalEvent): boolean {
  const t = event.type;
  if (t === 'mcp') return event.step.kind === 'call-start' || event.step.kind === 'call-arguments';
  return t === 'text' || t === 'reasoning' || t === 'refusal' || t === 'tool-call-start' || t === 'tool-call-delta';
}
