import type { Caller } from '../admission/admission.ts';
import { errors } from '../errors/catalog.ts';
import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import type { CompleteCall } from '../pipeline/complete-events.ts';
import type { PipelineContext } from '../pipeline/context.ts';
import type { RunScope } from '../pipeline/model-operation.ts';
import { capOutput } from '../pipeline/output-cap.ts';
import { completeRouted, openRouted } from '../pipeline/routed-calls.ts';
import { accessOf, type McpPlace } from './grants.ts';
import type { McpToolEntry } from './mcp-tool-entries.ts';
import { offerTools } from './model-tools.ts';
import type { ToolCallDeps } from './tool-call.ts';
import { toolLoop, type ToolLoopRun, type ToolLoopSetup } from './tool-loop.ts';

/** What a model operation reaches of the MCP gateway: its tool calls, and where the request came in. */
export interface McpForModels {
  /** Undefined while the MCP gateway is not loaded (mcp.servers named no server at start). */
  deps: ToolCallDeps | undefined;
  place: McpPlace;
}

/**
 * The request's MCP tools (none: undefined), offered as /mcp would list them to the same caller
 * at the same place under the request's config, and the canonical request with them added as
 * function tools. MCP tools take one answer (`n` of 1): each of several would call tools of its own.
 */
export function prepareToolLoop(
  mcp: McpForModels,
  entries: readonly McpToolEntry[],
  caller: Caller,
  ctx: PipelineContext,
  request: CanonicalRequest,
): { setup: ToolLoopSetup; request: CanonicalRequest } | undefined {
  if (entries.length === 0) return undefined;
  if (request.n != null && request.n > 1) throw errors.invalidRequest('MCP tools take one choice: n must be 1.', 'n');
  const deps = mcp.deps;
  if (!deps) {
    // Servers added to the config by a reload: the MCP gateway starts them at a restart.
    throw errors.invalidRequest('sluice starts its MCP servers at a restart: none runs yet.', `${entries[0].path}.server_label`);
  }
  const config = ctx.config.mcp;
  const access = accessOf(config, caller, mcp.place);
  const offer = offerTools(deps.hub, access, entries);
  const setup: ToolLoopSetup = {
    offer,
    scope: { caller, access, config, storeContentChars: ctx.accounting.storeContentChars },
    deps,
  };
  if (offer.functions.length === 0) return { setup, request };
  return { setup, request: { ...request, tools: [...(request.tools ?? []), ...offer.functions] } };
}

/** The `open` of a streamed request with MCP tools: its first step routed as usual, the loop over it. */
export function openWithTools(run: RunScope, request: CanonicalRequest, setup: ToolLoopSetup) {
  const open = (next: CanonicalRequest, signal: AbortSignal) => openRouted(run, next)(signal);
  return async (signal: AbortSignal): Promise<AsyncIterable<CanonicalEvent[]>> =>
    toolLoop(setup, { requestId: run.exchange.requestId, open, signal }, request, await open(request, signal));
}

/**
 * The non-streamed answer of a request with MCP tools: every step's events, as one answer's
 * (completeEvents). Its budget is the output its admission capped (`maxOutputTokens`): each
 * further call may write what is left of it after the steps before, their output and the input
 * of every further call counted as output (4 bytes a token).
 */
export function completeWithTools(run: RunScope, setup: ToolLoopSetup): CompleteCall {
  const cap = run.admission.maxOutputTokens;
  const left = (spent: number) => (cap === undefined ? undefined : cap - Math.ceil(spent / 4));
  const step = async (next: CanonicalRequest, spent: number) => once(await completeRouted(run, capOutput(next, left(spent)))());
  return (sent) => async (signal) => {
    const loop: ToolLoopRun = {
      requestId: run.exchange.requestId,
      open: (next, _signal, spent) => step(next, spent),
      budgetSpent: (spent) => (left(spent) ?? 1) <= 0,
      signal,
    };
    const events: CanonicalEvent[] = [];
    for await (const batch of toolLoop(setup, loop, sent, await step(sent, 0))) events.push(...batch);
    return events;
  };
}

async function* once(events: CanonicalEvent[]): AsyncGenerator<CanonicalEvent[]> {
  yield events;
}
