import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { CanonicalEvent, McpStep } from '../protocol/canonical/events.ts';
import type { CanonicalMessage, CanonicalRequest } from '../protocol/canonical/request.ts';
import type { Usage } from '../protocol/canonical/usage.ts';
import { addUsage, LoopStep, type McpCall } from './loop-step.ts';
import type { ModelToolsOffer } from './model-tools.ts';
import { runToolCall, type ToolCallDeps, type ToolCallScope } from './tool-call.ts';

type Batches = AsyncIterable<CanonicalEvent[]>;

/** A model request's MCP tools: what it is offered, and how its calls run (as /mcp runs the same caller's). */
export interface ToolLoopSetup {
  offer: ModelToolsOffer;
  scope: ToolCallScope;
  deps: ToolCallDeps;
}

/** What one run of the loop reaches: the request's id, its next model call, and its budget. */
export interface ToolLoopRun {
  requestId: string;
  /**
   * The model called again with the conversation so far (routed like the first call); `spent`:
   * the answer's cost so far beyond its first call's input, in bytes priced as output.
   */
  open: (request: CanonicalRequest, signal: AbortSignal, spent: number) => Promise<Batches>;
  /**
   * Whether `spent` (as `open`'s) leaves the budget nothing for another model call. A stream is
   * held to its budget by the stream itself, which prices the `next-step` event before the call.
   */
  budgetSpent?: (spent: number) => boolean;
  signal: AbortSignal;
}

/**
 * sluice's MCP tool loop over a model's calls: the events of the first step (`first`), then, while
 * the model calls only MCP tools, their calls (through the gateway: the caller's grants, limits,
 * timeout and result cap, a ledger row each, `<request id>-mcp-<n>`), their results sent back as
 * tool messages, and the model's next step; up to `mcp.max_steps` model calls. The client sees
 * one answer: the tools listed, each step's output, each MCP call as `mcp` events, one finish and
 * the usage summed over the steps (reported after each step, so that a later failure keeps it).
 * It ends when the model answers without calling a tool, calls one of the client's own tools
 * (returned as usual, after the step's MCP calls ran), reaches the step limit (its calls are not
 * run: `max-steps`, finish `length`), or the budget is spent between steps (finish `length`):
 * each further call's input is priced like output, an upper bound.
 */
export async function* toolLoop(
  setup: ToolLoopSetup,
  run: ToolLoopRun,
  request: CanonicalRequest,
  first: Batches,
): AsyncGenerator<CanonicalEvent[]> {
  const listed = setup.offer.listed.map(({ server, tools }) => mcp({ kind: 'list-tools', server, tools }));
  if (listed.length > 0) yield listed;
  const maxSteps = setup.scope.config.max_steps;
  let source = first;
  let current = request;
  let total: Usage | undefined;
  let bytes = 0;
  let calls = 0;
  for (let n = 1; ; n++) {
    const step = new LoopStep(setup.offer);
    for await (const batch of source) {
      const out: CanonicalEvent[] = [];
      for (const event of batch) out.push(...step.pass(event));
      if (out.length > 0) yield out;
      if (step.failed) return;
    }
    if (step.usage) total = addUsage(total, step.usage);
    const usage: CanonicalEvent[] = total ? [{ type: 'usage', usage: total }] : [];
    bytes += step.outputBytes;
    if (step.calls.length === 0) return yield [...finishOf(step), ...usage, ...endOf(step)];
    if (n >= maxSteps) {
      const notRun = step.calls.map((call) => done(call, null, `Not run: the answer reached mcp.max_steps (${maxSteps}).`));
      return yield [...notRun, mcp({ kind: 'max-steps', steps: maxSteps }), stop(), ...usage, ...endOf(step)];
    }
    const results: CanonicalMessage[] = [];
    for (const call of step.calls) {
      const { output, error } = await callMcp(setup, call, `${run.requestId}-mcp-${++calls}`, run.signal);
      results.push({ role: 'tool', tool_call_id: call.id, content: output ?? `Error: ${error}` });
      yield [done(call, output, error)];
    }
    if (usage.length > 0) yield usage;
    if (step.clientCalls) return yield [...finishOf(step), ...usage, ...endOf(step)];
    current = { ...current, messages: [...current.messages, step.assistantTurn(), ...results] };
    const inputBytes = Buffer.byteLength(JSON.stringify({ messages: current.messages, tools: current.tools }));
    bytes += inputBytes;
    if (run.budgetSpent?.(bytes)) return yield [stop(), ...usage, ...endOf(step)];
    yield [mcp({ kind: 'next-step', inputBytes })];
    source = await run.open(current, run.signal, bytes);
  }
}

/** One MCP call of the model's: its output, or what went wrong (the model reads either). */
async function callMcp(
  setup: ToolLoopSetup,
  call: McpCall,
  requestId: string,
  signal: AbortSignal,
): Promise<{ output: string | null; error: string | null }> {
  let args: unknown;
  try {
    args = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch {
    args = undefined;
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    return { output: null, error: `The arguments of ${call.prefixed} must be a JSON object, not: ${call.arguments}` };
  }
  try {
    const result = await runToolCall(
      { prefixed: call.prefixed, arguments: args as Record<string, unknown>, signal, requestId },
      setup.scope,
      setup.deps,
    );
    const text = resultText(result);
    return result.isError === true ? { output: null, error: text } : { output: text, error: null };
  } catch (err) {
    return { output: null, error: (err as Error).message };
  }
}

/** A tool's result as the model reads it: its text parts, other content as JSON, the structured content when nothing else. */
export function resultText(result: CallToolResult): string {
  const parts = result.content.map((part) => (part.type === 'text' ? part.text : JSON.stringify(part)));
  if (parts.length === 0 && result.structuredContent) return JSON.stringify(result.structuredContent);
  return parts.join('\n');
}

function mcp(step: McpStep): CanonicalEvent {
  return { type: 'mcp', step };
}

function done(call: McpCall, output: string | null, error: string | null): CanonicalEvent {
  const { server, name } = call.tool;
  return mcp({ kind: 'call-done', id: call.id, server, name, arguments: call.arguments, output, error });
}

function stop(): CanonicalEvent {
  return { type: 'finish', choice: 0, reason: 'length' };
}

function finishOf(step: LoopStep): CanonicalEvent[] {
  return step.finish ? [step.finish] : [];
}

function endOf(step: LoopStep): CanonicalEvent[] {
  return step.ended ? [{ type: 'end' }] : [];
}
