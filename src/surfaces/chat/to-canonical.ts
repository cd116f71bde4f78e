import type {
  CanonicalAssistantPart,
  CanonicalFile,
  CanonicalMessage,
  CanonicalRequest,
  CanonicalTextPart,
  CanonicalUserPart,
  Extra,
} from '../../protocol/canonical/request.ts';
import type { ChatMessage, ChatRequest, ChatTextPart } from './request-schema.ts';

/**
 * A validated chat body -> the canonical request. Lossless: every field the schema let through is
 * either a canonical field or kept in the `extra` of the object it came in (see
 * canonical/request.ts), so an OpenAI-compatible upstream still receives the body as sent.
 * `stream` is the surface's (it picks the adapter's stream or complete); `stream_options` rides
 * in `extra` for the upstream, the surface reads include_usage from the chat body itself.
 */
export function chatToCanonical(request: ChatRequest): CanonicalRequest {
  const {
    stream: _stream,
    model,
    messages,
    tools,
    tool_choice,
    parallel_tool_calls,
    response_format,
    reasoning_effort,
    max_completion_tokens,
    max_tokens,
    temperature,
    top_p,
    n,
    stop,
    presence_penalty,
    frequency_penalty,
    logit_bias,
    logprobs,
    top_logprobs,
    seed,
    user,
    metadata,
    service_tier,
    ...extra
  } = request;
  return defined({
    model,
    messages: messages.map(chatMessageToCanonical),
    tools,
    tool_choice,
    parallel_tool_calls,
    response_format,
    reasoning_effort,
    max_completion_tokens,
    max_tokens,
    temperature,
    top_p,
    n,
    stop,
    presence_penalty,
    frequency_penalty,
    logit_bias,
    logprobs,
    top_logprobs,
    seed,
    user,
    metadata,
    service_tier,
    extra: nonEmpty(extra),
  });
}

/** One chat message; `developer` becomes a system message that remembers it (`developer: true`). */
export function chatMessageToCanonical(message: ChatMessage): CanonicalMessage {
  switch (message.role) {
    case 'system':
    case 'developer': {
      const { role, content, name, cache_control, ...extra } = message;
      const developer = role === 'developer' ? true : undefined;
      return defined({ role: 'system', content: textContent(content), name, developer, cache_control, extra: nonEmpty(extra) });
    }
    case 'user': {
      const { role, content, name, cache_control, ...extra } = message;
      const parts = typeof content === 'string' ? content : content.map(userPart);
      return defined({ role, content: parts, name, cache_control, extra: nonEmpty(extra) });
    }
    case 'assistant': {
      const { role, content, refusal, tool_calls, name, reasoning_content, reasoning_signature, cache_control, ...extra } =
        message;
      const parts = Array.isArray(content) ? content.map(assistantPart) : content;
      return defined({
        role,
        content: parts,
        refusal,
        tool_calls,
        name,
        reasoning_content,
        reasoning_signature,
        cache_control,
        extra: nonEmpty(extra),
      });
    }
    case 'tool': {
      const { role, content, tool_call_id, cache_control, ...extra } = message;
      return defined({ role, content: textContent(content), tool_call_id, cache_control, extra: nonEmpty(extra) });
    }
    case 'function': {
      const { role, content, name, cache_control, ...extra } = message;
      return defined({ role, content, name, cache_control, extra: nonEmpty(extra) });
    }
  }
}

function textContent(content: string | ChatTextPart[]): string | CanonicalTextPart[] {
  return typeof content === 'string' ? content : content.map(textPart);
}

function textPart(part: ChatTextPart): CanonicalTextPart {
  const { type, text, cache_control, ...extra } = part;
  return defined({ type, text, cache_control, extra: nonEmpty(extra) });
}

function userPart(part: Exclude<Extract<ChatMessage, { role: 'user' }>['content'], string>[number]): CanonicalUserPart {
  switch (part.type) {
    case 'text':
      return textPart(part);
    case 'file':
      return { type: 'file', file: file(part.file) };
    default:
      // image_url and input_audio: the schema keeps only their known fields.
      return part;
  }
}

function file(value: Record<string, unknown> & { file_data?: string; file_id?: string; filename?: string }): CanonicalFile {
  const { file_data, file_id, filename, ...extra } = value;
  return defined({ file_data, file_id, filename, extra: nonEmpty(extra) });
}

type ChatAssistantPart = Exclude<NonNullable<Extract<ChatMessage, { role: 'assistant' }>['content']>, string>[number];

/** The schema guarantees a `text` part its text and a `refusal` part its refusal (strings). */
function assistantPart(part: ChatAssistantPart): CanonicalAssistantPart {
  if (part.type === 'text') return textPart(part as ChatTextPart);
  if (part.type === 'refusal') {
    const { type, refusal, ...extra } = part as { type: 'refusal'; refusal: string };
    return defined({ type, refusal, extra: nonEmpty(extra) });
  }
  return part;
}

function nonEmpty(extra: Extra): Extra | undefined {
  return Object.keys(extra).length > 0 ? extra : undefined;
}

/**
 * Absent fields stay absent (destructuring made them `undefined`); `null` as sent is kept. Copied
 * into a new object rather than deleted from this one: a `delete` turns an object into a hash
 * table (the request and each message took 450-830 bytes of property table each, held for the
 * request's life: measured in the soak's heap), where one built by adding keys stays compact.
 */
function defined<T extends object>(value: T): T {
  const out: Record<string, unknown> = {};
  for (const key in value) if (value[key] !== undefined) out[key] = value[key];
  return out as T;
}
