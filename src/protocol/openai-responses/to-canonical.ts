import type { ChatMessage, ChatRequest } from '../openai-chat/request-schema.ts';
import type { ResponsesInputItem, ResponsesRequest } from './request-schema.ts';

type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;
type UserContent = Extract<ChatMessage, { role: 'user' }>['content'];

/**
 * Responses input items -> chat messages, the canonical request every provider reads. Function
 * calls in a row become one assistant message with several tool_calls, joined to the assistant
 * text just before them (a response's [message, function_call, ...] is one chat turn: text, then
 * calls); a reasoning item rides on the assistant message after it (reasoning_content /
 * reasoning_signature), as on the chat surface.
 */
export function itemsToMessages(items: readonly ResponsesInputItem[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  let pendingReasoning: { text: string; signature: string | null } | null = null;
  const assistant = (forCall = false): AssistantMessage => {
    const last = out.at(-1);
    if (last?.role === 'assistant' && (forCall || !(typeof last.content === 'string' && last.content))) return last;
    const message: AssistantMessage = { role: 'assistant', content: null };
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
      } else {
        out.push({ role: item.role, content: text(item.content) });
      }
    }
  }
  return out;
}

function userContent(content: Extract<ResponsesInputItem, { role: string }>['content']): UserContent {
  if (typeof content === 'string') return content;
  return content.map((p) =>
    p.type === 'input_image'
      ? { type: 'image_url' as const, image_url: { url: p.image_url, ...(p.detail ? { detail: p.detail } : {}) } }
      : { type: 'text' as const, text: p.type === 'refusal' ? p.refusal : p.text },
  );
}

/** The whole Responses request as a chat request, after the stored conversation it continues. */
export function toChatRequest(request: ResponsesRequest, history: readonly ChatMessage[]): ChatRequest {
  const input: ResponsesInputItem[] =
    typeof request.input === 'string' ? [{ role: 'user', content: request.input }] : request.input;
  const messages: ChatMessage[] = [];
  // Instructions apply to this response only; they are not carried over from a previous one.
  if (request.instructions) messages.push({ role: 'system', content: request.instructions });
  messages.push(...history, ...itemsToMessages(input));
  const chat: ChatRequest = { model: request.model, messages, stream: request.stream === true };
  if (request.tools) {
    chat.tools = request.tools.map((t) => ({
      type: 'function' as const,
      function: {
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        ...(t.parameters ? { parameters: t.parameters } : {}),
        ...(t.strict != null ? { strict: t.strict } : {}),
      },
    }));
  }
  const choice = request.tool_choice;
  if (choice) chat.tool_choice = typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
  if (request.parallel_tool_calls != null) chat.parallel_tool_calls = request.parallel_tool_calls;
  if (request.max_output_tokens != null) chat.max_completion_tokens = request.max_output_tokens;
  if (request.temperature != null) chat.temperature = request.temperature;
  if (request.top_p != null) chat.top_p = request.top_p;
  if (request.reasoning?.effort) chat.reasoning_effort = request.reasoning.effort;
  if (request.metadata) chat.metadata = request.metadata;
  if (request.user) chat.user = request.user;
  const format = request.text?.format;
  if (format?.type === 'json_object') chat.response_format = { type: 'json_object' };
  if (format?.type === 'json_schema') {
    chat.response_format = {
      type: 'json_schema',
      json_schema: {
        name: format.name,
        schema: format.schema,
        ...(format.description ? { description: format.description } : {}),
        ...(format.strict != null ? { strict: format.strict } : {}),
      },
    };
  }
  return chat;
}
