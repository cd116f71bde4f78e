import type { CanonicalEvent, McpStep } from '../../protocol/canonical/events.ts';

/**
 * sluice's extension of chat completions for the MCP tools it runs (docs/api/mcp.md): each call
 * as the Responses API's `mcp_call` item, never in `tool_calls` (a client would try to run it).
 */
export function chatMcpCall(step: Extract<McpStep, { kind: 'call-done' }>): Record<string, unknown> {
  return {
    id: step.id,
    type: 'mcp_call',
    server_label: step.server,
    name: step.name,
    arguments: step.arguments,
    output: step.output,
    error: step.error,
  };
}

/** The `sluice` member of a whole completion: its MCP calls, and the step limit if the answer reached it. */
export function chatMcpSummary(events: readonly CanonicalEvent[]): Record<string, unknown> | undefined {
  const calls: Record<string, unknown>[] = [];
  let maxSteps: number | undefined;
  for (const event of events) {
    if (event.type !== 'mcp') continue;
    if (event.step.kind === 'call-done') calls.push(chatMcpCall(event.step));
    else if (event.step.kind === 'max-steps') maxSteps = event.step.steps;
  }
  if (calls.length === 0 && maxSteps === undefined) return undefined;
  return { mcp_calls: calls, ...(maxSteps === undefined ? {} : { mcp_max_steps: maxSteps }) };
}
