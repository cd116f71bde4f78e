import type { McpToolEntry } from '../../mcp/mcp-tool-entries.ts';
import type { Usage } from '../../protocol/canonical/usage.ts';
import type { ResponsesRequest } from './request-schema.ts';

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

export type OutputPart =
  | { type: 'output_text'; text: string; annotations: unknown[]; logprobs: unknown[] }
  | { type: 'refusal'; refusal: string };

export type OutputItem =
  | { type: 'message'; id: string; status: string; role: 'assistant'; content: OutputPart[] }
  | { type: 'reasoning'; id: string; summary: { type: 'summary_text'; text: string }[]; encrypted_content?: string }
  | { type: 'function_call'; id: string; call_id: string; name: string; arguments: string; status: string }
  | { type: 'mcp_list_tools'; id: string; server_label: string; tools: McpListToolsEntry[]; error: string | null }
  | {
      type: 'mcp_call';
      id: string;
      server_label: string;
      name: string;
      arguments: string;
      output: string | null;
      error: string | null;
      status: string;
    };

/** A tool of an `mcp_list_tools` item, as OpenAI's Responses API lists it. */
export interface McpListToolsEntry {
  name: string;
  description: string | null;
  input_schema: Record<string, unknown>;
  annotations: null;
}

export interface ResponseIdentity {
  id: string;
  createdAt: number;
  /** The model as the client named it. */
  model: string;
  request: ResponsesRequest;
  /** The request's `{"type": "mcp"}` tools, which sluice ran (taken out of `request`). */
  mcpTools?: readonly McpToolEntry[];
}

export interface ResponseState {
  status: ResponseStatus;
  output: OutputItem[];
  usage: Usage | null;
  error?: { code: string; message: string } | null;
  /** `max_steps`: sluice's, the MCP tool loop reached mcp.max_steps (docs/api/mcp.md). */
  incompleteReason?: 'max_output_tokens' | 'content_filter' | 'max_steps' | null;
}

export function responsesUsage(usage: Usage) {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cachedInputTokens ?? 0 },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

/**
 * The `response` object: in response.created / .completed / .failed, and the non-stream body. The
 * request's settings are echoed back, with the API's default for each one it left out.
 */
export function buildResponse(id: ResponseIdentity, state: ResponseState): Record<string, unknown> {
  const r = id.request;
  return {
    id: id.id,
    object: 'response',
    created_at: id.createdAt,
    status: state.status,
    error: state.error ?? null,
    incomplete_details: incompleteDetails(state),
    instructions: r.instructions ?? null,
    max_output_tokens: r.max_output_tokens ?? null,
    model: id.model,
    output: state.output,
    parallel_tool_calls: r.parallel_tool_calls ?? true,
    previous_response_id: r.previous_response_id ?? null,
    reasoning: echoedReasoning(r),
    store: r.store ?? true,
    temperature: r.temperature ?? null,
    text: echoedText(r),
    tool_choice: r.tool_choice ?? 'auto',
    tools: echoedTools(r, id.mcpTools ?? []),
    top_p: r.top_p ?? null,
    top_logprobs: r.top_logprobs ?? null,
    max_tool_calls: r.max_tool_calls ?? null,
    truncation: r.truncation ?? 'disabled',
    background: false,
    prompt_cache_key: r.prompt_cache_key ?? null,
    safety_identifier: r.safety_identifier ?? null,
    usage: state.usage ? responsesUsage(state.usage) : null,
    user: r.user ?? null,
    metadata: r.metadata ?? {},
  };
}

function incompleteDetails(state: ResponseState): { reason: NonNullable<ResponseState['incompleteReason']> } | null {
  return state.incompleteReason ? { reason: state.incompleteReason } : null;
}

function echoedReasoning(r: ResponsesRequest) {
  return { effort: r.reasoning?.effort ?? null, summary: r.reasoning?.summary ?? null };
}

function echoedText(r: ResponsesRequest) {
  return { format: r.text?.format ?? { type: 'text' }, verbosity: r.text?.verbosity ?? 'medium' };
}

function echoedTools(r: ResponsesRequest, mcpTools: readonly McpToolEntry[]) {
  const functions = (r.tools ?? []).map((t) => ({
    type: 'function',
    name: t.name,
    description: t.description ?? null,
    parameters: t.parameters ?? null,
    strict: t.strict ?? null,
  }));
  // The MCP tools sluice ran, as OpenAI echoes its hosted MCP tool (no URL nor headers: sluice's config has them).
  const servers = mcpTools.map((t) => ({
    type: 'mcp',
    server_label: t.server,
    server_url: null,
    allowed_tools: t.allowed ?? null,
    headers: null,
    require_approval: 'never',
    server_description: null,
  }));
  return [...functions, ...servers];
}
