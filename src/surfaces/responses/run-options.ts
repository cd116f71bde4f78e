import type { McpToolEntry } from '../../mcp/mcp-tool-entries.ts';
import type { RunScope } from '../../pipeline/model-operation.ts';
import type { RunStreamOptions, StreamTimings } from '../../pipeline/run-stream.ts';
import type { ResponsesStreamChoices } from '../../protocol/stream-profiles.ts';
import type { ResponsesStore } from '../../store/responses-store.ts';
import type { ResponseIdentity } from './encode-response.ts';
import type { ResponsesRequest } from './request-schema.ts';

/** What every run of POST /v1/responses is told. */
export interface RunResponsesOptions {
  timings: StreamTimings;
  /** Where finished responses go (absent: the store is off, or the request said store: false). */
  store: ResponsesStore | undefined;
  /** Records the ids a relayed upstream handed out as the caller's project's (absent: no store, or no project). */
  recordIds?: (ids: readonly string[]) => void;
  /** The stream profile's choices for a stream sluice builds (a relayed one is the upstream's, as sent). */
  choices: ResponsesStreamChoices;
  /** The request's `{"type": "mcp"}` tools, which sluice runs: the response echoes them. */
  mcpTools: readonly McpToolEntry[];
}

/** How every Responses stream runs, relayed or built here. */
export function streamOptions(run: RunScope, options: RunResponsesOptions): RunStreamOptions {
  return {
    provider: run.target.provider,
    timings: options.timings,
    contentType: 'text/event-stream; charset=utf-8',
    onAcknowledged: () => run.accountant.markAcknowledged(),
  };
}

/** The response sluice builds for a request over canonical events, named after the request. */
export function responseIdentity(run: RunScope, request: ResponsesRequest, options: RunResponsesOptions): ResponseIdentity {
  return {
    id: `resp_${run.exchange.requestId}`,
    createdAt: Math.floor(run.accountant.startedAt / 1000),
    model: run.target.requested,
    request,
    mcpTools: options.mcpTools,
  };
}
