import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { CanonicalMessage, CanonicalRequest, CanonicalUserPart } from '../protocol/canonical/request.ts';

/**
 * Messages in the shape of the GenAI semantic conventions' content attributes
 * (gen_ai.input.messages, gen_ai.output.messages, gen_ai.system_instructions: a role and typed
 * parts). Only what a trace that captures content records (docs/operations/observability.md "Traces (OpenTelemetry)").
 */
export type GenAiPart = { type: string } & Record<string, unknown>;

export interface GenAiMessage {
  role: string;
  parts: GenAiPart[];
  name?: string;
  /** Output messages only. */
  finish_reason?: string;
}

/** What a request sent: the instructions given apart from the conversation, and the conversation. */
export interface GenAiInput {
  system: GenAiPart[];
  messages: GenAiMessage[];
}

const text = (content: string): GenAiPart => ({ type: 'text', content });

/**
 * The canonical request as GenAI input. The conventions keep instructions sent apart from the
 * conversation (Anthropic's `system`, the Responses API's `instructions`: the leading system
 * messages of those surfaces) in gen_ai.system_instructions, and system messages that are part of
 * the chat history (Chat Completions) in gen_ai.input.messages.
 */
export function canonicalInput(request: CanonicalRequest, surface: LedgerRecord['surface']): GenAiInput {
  const messages = request.messages;
  let apart = 0;
  if (surface === 'messages' || surface === 'responses') while (messages[apart]?.role === 'system') apart++;
  return {
    system: messages.slice(0, apart).flatMap((m) => inputMessage(m).parts),
    messages: messages.slice(apart).map(inputMessage),
  };
}

function inputMessage(message: CanonicalMessage): GenAiMessage {
  const named = (m: GenAiMessage): GenAiMessage => ('name' in message && message.name ? { ...m, name: message.name } : m);
  switch (message.role) {
    case 'system':
      return named({ role: 'system', parts: textParts(message.content) });
    case 'user':
      return named({
        role: 'user',
        parts: typeof message.content === 'string' ? [text(message.content)] : message.content.map(userPart),
      });
    case 'assistant': {
      const parts: GenAiPart[] = [];
      if (message.reasoning_content) parts.push({ type: 'reasoning', content: message.reasoning_content });
      if (typeof message.content === 'string') {
        if (message.content) parts.push(text(message.content));
      } else {
        for (const p of message.content ?? []) {
          if (p.type === 'text') parts.push(text(String(p.text)));
          else if (p.type === 'refusal') parts.push({ type: 'refusal', content: String(p.refusal) });
          else parts.push({ type: p.type });
        }
      }
      if (message.refusal) parts.push({ type: 'refusal', content: message.refusal });
      for (const call of message.tool_calls ?? []) {
        parts.push(toolCall(call.id, call.function.name, call.function.arguments));
      }
      return named({ role: 'assistant', parts });
    }
    case 'tool':
      return {
        role: 'tool',
        parts: [{ type: 'tool_call_response', id: message.tool_call_id, response: joinText(message.content) }],
      };
    case 'function':
      return { role: 'tool', name: message.name, parts: [{ type: 'tool_call_response', response: message.content ?? '' }] };
  }
}

function textParts(content: string | { text: string }[]): GenAiPart[] {
  return typeof content === 'string' ? [text(content)] : content.map((p) => text(p.text));
}

function joinText(content: string | { text: string }[]): string {
  return typeof content === 'string' ? content : content.map((p) => p.text).join('');
}

function userPart(part: CanonicalUserPart): GenAiPart {
  switch (part.type) {
    case 'text':
      return text(part.text);
    case 'image_url':
      return media(part.image_url.url, 'image');
    case 'input_audio':
      return { type: 'blob', modality: 'audio', mime_type: `audio/${part.input_audio.format}`, content: part.input_audio.data };
    case 'file':
      if (part.file.file_data) return media(part.file.file_data, 'document');
      return { type: 'file', modality: 'document', file_id: part.file.file_id ?? '' };
  }
}

/** A data URL is inline data (a blob part); any other URL is referenced (a uri part). */
function media(url: string, modality: string): GenAiPart {
  const inline = /^data:([^;,]*)(?:;[^,]*)?,(.*)$/s.exec(url);
  if (!inline) return { type: 'uri', modality, uri: url };
  return { type: 'blob', modality, ...(inline[1] ? { mime_type: inline[1] } : {}), content: inline[2] };
}

/** Arguments as the object the model wrote when they parse, else as the text it wrote. */
export function toolCall(id: string | null, name: string, args: string): GenAiPart {
  let parsed: unknown = args;
  try {
    parsed = JSON.parse(args);
  } catch {
    // Kept as written: a call cut short, or a model that wrote something else than JSON.
  }
  return { type: 'tool_call', ...(id ? { id } : {}), name, arguments: parsed };
}

type Json = Record<string, unknown>;

/**
 * A relayed Responses body as GenAI input (the body goes upstream as sent, unparsed, so it is read
 * here leniently: a part or item of a type not known here is kept as its type alone).
 */
export function responsesInput(body: Json): GenAiInput {
  const system = typeof body.instructions === 'string' && body.instructions ? [text(body.instructions)] : [];
  if (typeof body.input === 'string') return { system, messages: [{ role: 'user', parts: [text(body.input)] }] };
  return { system, messages: Array.isArray(body.input) ? responsesItems(body.input) : [] };
}

/**
 * Responses items (a request's input, a response's output) as GenAI messages: what the model
 * produced (function calls, reasoning, assistant messages) joins the assistant message before it.
 */
export function responsesItems(items: readonly unknown[]): GenAiMessage[] {
  const out: GenAiMessage[] = [];
  const push = (role: string, part: GenAiPart) => {
    const last = out.at(-1);
    if (last?.role === role && role === 'assistant') last.parts.push(part);
    else out.push({ role, parts: [part] });
  };
  for (const raw of items) {
    if (raw === null || typeof raw !== 'object') continue;
    const item = raw as Json;
    if (item.type === 'function_call') {
      push('assistant', toolCall(str(item.call_id), str(item.name), str(item.arguments)));
    } else if (item.type === 'function_call_output') {
      push('tool', { type: 'tool_call_response', id: str(item.call_id), response: item.output ?? null });
    } else if (item.type === 'reasoning') {
      const summary = Array.isArray(item.summary) ? item.summary.map((s) => str((s as Json | null)?.text)).join('\n\n') : '';
      push('assistant', { type: 'reasoning', content: summary });
    } else if (typeof item.role === 'string') {
      const role = item.role === 'developer' ? 'system' : item.role;
      const parts =
        typeof item.content === 'string'
          ? [text(item.content)]
          : Array.isArray(item.content)
            ? item.content.map(responsesPart)
            : [];
      if (role === 'assistant') for (const part of parts) push(role, part);
      else out.push({ role, parts });
    } else {
      // A hosted tool's call (web_search_call, ...): run by the provider, kept by its type.
      push('assistant', { type: str(item.type) || 'unknown' });
    }
  }
  return out;
}

function responsesPart(raw: unknown): GenAiPart {
  const part = (raw ?? {}) as Json;
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return text(str(part.text));
    case 'refusal':
      return { type: 'refusal', content: str(part.refusal) };
    case 'input_image':
      return typeof part.image_url === 'string'
        ? media(part.image_url, 'image')
        : { type: 'file', modality: 'image', file_id: str(part.file_id) };
    case 'input_file':
      return typeof part.file_data === 'string'
        ? media(part.file_data, 'document')
        : { type: 'file', modality: 'document', file_id: str(part.file_id) };
    default:
      return { type: str(part.type) || 'unknown' };
  }
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
