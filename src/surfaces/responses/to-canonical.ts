import type {
  CanonicalAssistantMessage,
  CanonicalMessage,
  CanonicalRequest,
  CanonicalUserMessage,
} from '../../protocol/canonical/request.ts';
import type { ResponsesInputItem, ResponsesRequest } from './request-schema.ts';

/**
 * Responses input items -> canonical messages (the chat vocabulary every provider reads). Function
 * calls in a row become one assistant message with several tool_calls, joined to the assistant
 * text just before them (a response's [message, function_call, ...] is one chat turn: text, then
 * calls); a reasoning item rides on the assistant message after it (reasoning_content /
 * reasoning_signature), as on the chat surface.
 */
export function itemsToMessages(items: readonly ResponsesInputItem[]): CanonicalMessage[] {
  const out: CanonicalMessage[] = [];
  let pendingReasoning: { text: string; signature: string | null } | null = null;
  const assistant = (forCall = false): CanonicalAssistantMessage => {
    const last = out.at(-1);
    if (last?.role === 'assistant' && (forCall || !(typeof last.content === 'string' && last.content))) return last;
    const message: CanonicalAssistantMessage = { role: 'assistant', content: null };
    if (pendingReasoning) {
      message.reasoning_content = pendingReasoning.text;
      if (pendingReasoning.signature) message.reasoning_signature = pendingReasoning.signature;
      pendingReasoning = null;
    }
    out.push(message);
    return message;
  };
  for (const item of items) {
    if (item.type === 'reasoning') {
      pendingReasoning = { text: item.summary.map((s) => s.text).join('\n\n'), signature: item.encrypted_content ?? null };
    } else if (item.type === 'function_call') {
      const message = assistant(true);
      message.tool_calls = [
        ...(message.tool_calls ?? []),
        { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } },
      ];
    } else if (item.type === 'function_call_output') {
      const content = typeof item.output === 'string' ? item.output : item.output.map((p) => p.text).join('');
      out.push({ role: 'tool', tool_call_id: item.call_id, content });
    } else {
      const text = (parts: typeof item.content) =>
        typeof parts === 'string'
          ? parts
          : parts.map((p) => (p.type === 'refusal' ? p.refusal : 'text' in p ? p.text : '')).join('');
      if (item.role === 'assistant') {
        const message = assistant();
        message.content = (typeof message.content === 'string' ? message.content : '') + text(item.content);
      } else if (item.role === 'user') {
        out.push({ role: 'user', content: userContent(item.content) });
      } else if (item.role === 'developer') {
        out.push({ role: 'system', content: text(item.content), developer: true });
      } else {
        out.push({ role: item.role, content: text(item.content) });
      }
    }
  }
  return out;
}

function userContent(content: Extract<ResponsesInputItem, { role: string }>['content']): CanonicalUserMessage['content'] {
  if (typeof content === 'string') return content;
  return content.map((p) =>
    p.type === 'input_image'
      ? {
          type: 'image_url' as const,
          // `original` (full resolution) has no chat counterpart: the provider's default then.
          image_url: { url: p.image_url, ...(p.detail && p.detail !== 'original' ? { detail: p.detail } : {}) },
        }
      : { type: 'text' as const, text: p.type === 'refusal' ? p.refusal : p.text },
  );
}

/**
 * The whole Responses request as a canonical request, after the stored conversation it continues.
 * `stream` is the surface's; fields with no canonical meaning (store, truncation, background:
 * false, ...) are the surface's too. The prompt-cache hints, `safety_identifier` and
 * `text.verbosity` ride in `extra`, so an OpenAI-compatible upstream gets them under the names
 * Chat Completions gives them (native providers do without a hint). Logprobs are asked for when
 * the client includes them in the output (`include: ["message.output_text.logprobs"]`);
 * `max_tool_calls: 0` is `tool_choice: "none"` (a larger limit is enforced on the output, see
 * encode-stream.ts); `allowed_tools` narrows the tools offered to the ones it names.
 */
export function responsesToCanonical(request: ResponsesRequest, history: readonly CanonicalMessage[]): CanonicalRequest {
  const canonical: CanonicalRequest = { model: request.model, messages: conversation(request, history) };
  if (request.tools) canonical.tools = canonicalTools(request.tools, request.tool_choice);
  applyToolChoice(request, canonical);
  if (request.parallel_tool_calls != null) canonical.parallel_tool_calls = request.parallel_tool_calls;
  if (request.max_output_tokens != null) canonical.max_completion_tokens = request.max_output_tokens;
  if (request.temperature != null) canonical.temperature = request.temperature;
  if (request.top_p != null) canonical.top_p = request.top_p;
  if (request.reasoning?.effort) canonical.reasoning_effort = request.reasoning.effort;
  if (request.metadata) canonical.metadata = request.metadata;
  if (request.user) canonical.user = request.user;
  if (request.include?.includes('message.output_text.logprobs')) {
    canonical.logprobs = true;
    if (request.top_logprobs != null) canonical.top_logprobs = request.top_logprobs;
  }
  const extra = extraHints(request);
  if (extra) canonical.extra = extra;
  const format = responseFormat(request.text?.format);
  if (format) canonical.response_format = format;
  return canonical;
}

/** The instructions, then the stored conversation, then this request's input. */
function conversation(request: ResponsesRequest, history: readonly CanonicalMessage[]): CanonicalMessage[] {
  const input: ResponsesInputItem[] =
    typeof request.input === 'string' ? [{ role: 'user', content: request.input }] : request.input;
  const messages: CanonicalMessage[] = [];
  // Instructions apply to this response only; they are not carried over from a previous one.
  if (request.instructions) messages.push({ role: 'system', content: request.instructions });
  messages.push(...history, ...itemsToMessages(input));
  return messages;
}

/** The function tools, as chat's, narrowed to those an `allowed_tools` choice names. */
function canonicalTools(
  tools: NonNullable<ResponsesRequest['tools']>,
  choice: ResponsesRequest['tool_choice'],
): CanonicalRequest['tools'] {
  const allowed = allowedTools(choice);
  return tools
    .filter((t) => !allowed || allowed.has(t.name))
    .map((t) => ({
      type: 'function' as const,
      function: {
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        ...(t.parameters ? { parameters: t.parameters } : {}),
        ...(t.strict != null ? { strict: t.strict } : {}),
      },
    }));
}

/** The hints that ride in `extra` under their Chat Completions names; undefined when there is none. */
function extraHints(request: ResponsesRequest): Record<string, unknown> | undefined {
  const extra: Record<string, unknown> = {};
  for (const key of ['prompt_cache_key', 'prompt_cache_retention', 'prompt_cache_options', 'safety_identifier'] as const) {
    if (request[key] != null) extra[key] = request[key];
  }
  if (request.text?.verbosity != null) extra.verbosity = request.text.verbosity;
  return Object.keys(extra).length > 0 ? extra : undefined;
}

/** `text.format` as chat's response_format (plain text is no format). */
function responseFormat(format: NonNullable<ResponsesRequest['text']>['format']): CanonicalRequest['response_format'] {
  if (format?.type === 'json_object') return { type: 'json_object' };
  if (format?.type !== 'json_schema') return undefined;
  return {
    type: 'json_schema',
    json_schema: {
      name: format.name,
      schema: format.schema,
      ...(format.description ? { description: format.description } : {}),
      ...(format.strict != null ? { strict: format.strict } : {}),
    },
  };
}

/** The tools an `allowed_tools` choice names (undefined: no such choice, every tool is offered). */
function allowedTools(choice: ResponsesRequest['tool_choice']): Set<string | undefined> | undefined {
  if (typeof choice !== 'object' || choice.type !== 'allowed_tools') return undefined;
  return new Set((choice as { tools: { name?: string }[] }).tools.map((t) => t.name));
}

/** tool_choice as a mode or a function (allowed_tools: its mode), and max_tool_calls: 0 as none. */
function applyToolChoice(request: ResponsesRequest, canonical: CanonicalRequest): void {
  const choice = request.tool_choice;
  if (typeof choice === 'string') canonical.tool_choice = choice;
  else if (choice?.type === 'function' && typeof choice.name === 'string') {
    canonical.tool_choice = { type: 'function', function: { name: choice.name } };
  } else if (choice?.type === 'allowed_tools') {
    canonical.tool_choice = (choice as { mode: 'auto' | 'required' }).mode;
  }
  if (request.max_tool_calls === 0 && canonical.tools?.length) canonical.tool_choice = 'none';
}
