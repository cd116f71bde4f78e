import { errors } from '../../errors/catalog.ts';
import type { CanonicalFile, CanonicalMessage } from '../../protocol/canonical/request.ts';
import type { Unsupported } from './unsupported.ts';
import { parseToolArguments } from '../parse-tool-arguments.ts';

/** Prompt caching breakpoint (Anthropic "Prompt caching"): `{"type":"ephemeral","ttl":"1h"}`. */
export interface CacheControl {
  type: 'ephemeral';
  ttl?: string;
}

type Cacheable = { cache_control?: CacheControl };
export type AnthropicTextBlock = { type: 'text'; text: string } & Cacheable;
export type AnthropicBlock = Cacheable &
  (
    | AnthropicTextBlock
    | { type: 'image'; source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string } }
    | {
        type: 'document';
        source: { type: 'base64'; media_type: string; data: string } | { type: 'text'; media_type: 'text/plain'; data: string };
        title?: string;
      }
    | { type: 'thinking'; thinking: string; signature: string }
    | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
    | { type: 'tool_result'; tool_use_id: string; content: string | AnthropicTextBlock[] }
  );

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: string | AnthropicBlock[];
}

export interface ConvertedMessages {
  system: AnthropicTextBlock[];
  messages: AnthropicMessage[];
}

type UserPart = Exclude<Extract<CanonicalMessage, { role: 'user' }>['content'], string>[number];

/**
 * Canonical messages -> Anthropic's top-level `system` and alternating turns:
 * - system and developer messages, wherever they are, become `system` text blocks, in order;
 * - consecutive tool messages become one user turn of `tool_result` blocks;
 * - an assistant's reasoning_content + reasoning_signature become a leading `thinking` block, and
 *   its tool_calls `tool_use` blocks with the arguments JSON parsed into `input`;
 * - `cache_control` on a text part marks that block; on a message (as LiteLLM accepts it), the
 *   message's last block.
 */
export function convertMessages(messages: readonly CanonicalMessage[], unsupported: Unsupported): ConvertedMessages {
  const system: AnthropicTextBlock[] = [];
  const out: AnthropicMessage[] = [];
  let toolTurn: AnthropicBlock[] | undefined;

  messages.forEach((message, i) => {
    const at = `messages[${i}]`;
    const cache = cacheControlOf(message, at);
    if (message.role !== 'tool') toolTurn = undefined;
    switch (message.role) {
      case 'system':
        system.push(...withCache(textBlocks(message.content, at), cache));
        break;
      case 'user': {
        let content = typeof message.content === 'string' ? message.content : userBlocks(message.content, at, unsupported);
        if (cache) content = withCache(typeof content === 'string' ? textBlocks(content) : content, cache);
        // Parts left out (drop_params) can empty a turn, which Anthropic would reject.
        if (content.length > 0 || typeof message.content === 'string') out.push({ role: 'user', content });
        break;
      }
      case 'assistant': {
        const blocks = withCache(assistantBlocks(message, at, unsupported), cache);
        // Anthropic rejects an empty turn; an assistant message with nothing in it says nothing.
        if (blocks.length > 0) out.push({ role: 'assistant', content: blocks });
        break;
      }
      case 'tool': {
        const content = typeof message.content === 'string' ? message.content : textBlocks(message.content);
        const [block] = withCache([{ type: 'tool_result', tool_use_id: message.tool_call_id, content }], cache);
        if (toolTurn) toolTurn.push(block);
        else {
          toolTurn = [block];
          out.push({ role: 'user', content: toolTurn });
        }
        break;
      }
      case 'function':
        unsupported(
          at,
          'anthropic needs tool messages (role "tool" with tool_call_id); legacy function messages cannot be sent.',
        );
        break;
    }
  });
  return { system, messages: out };
}

/** Text parts as blocks, each keeping its own `cache_control` (the per-part form of prompt caching). */
function textBlocks(content: string | { type: 'text'; text: string }[], at = ''): AnthropicTextBlock[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  // Anthropic rejects empty text blocks, which OpenAI clients do send (e.g. content: "").
  return content.flatMap((part, j) =>
    part.text === '' ? [] : withCache([{ type: 'text' as const, text: part.text }], cacheControlOf(part, `${at}.content[${j}]`)),
  );
}

function userBlocks(parts: UserPart[], at: string, unsupported: Unsupported): AnthropicBlock[] {
  const blocks: AnthropicBlock[] = [];
  parts.forEach((part, j) => {
    const param = `${at}.content[${j}]`;
    switch (part.type) {
      case 'text':
        blocks.push(...withCache(textBlocks(part.text), cacheControlOf(part, param)));
        break;
      case 'image_url':
        blocks.push({ type: 'image', source: imageSource(part.image_url.url, `${param}.image_url.url`) });
        break;
      case 'file': {
        const block = documentBlock(part.file, param, unsupported);
        if (block) blocks.push(block);
        break;
      }
      case 'input_audio':
        unsupported(param, 'anthropic does not accept audio input.');
        break;
    }
  });
  return blocks;
}

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

function imageSource(url: string, param: string): Extract<AnthropicBlock, { type: 'image' }>['source'] {
  const data = DATA_URL.exec(url);
  if (data) return { type: 'base64', media_type: data[1], data: data[2] };
  if (/^https?:\/\//i.test(url)) return { type: 'url', url };
  throw errors.invalidRequest('An image must be an http(s) URL or a base64 data URL (data:image/png;base64,…).', param);
}

/** OpenAI's file part carrying the file inline: PDFs and plain text are Anthropic documents. */
function documentBlock(file: CanonicalFile, param: string, unsupported: Unsupported): AnthropicBlock | undefined {
  const data = typeof file.file_data === 'string' ? DATA_URL.exec(file.file_data) : null;
  const title = typeof file.filename === 'string' ? { title: file.filename } : {};
  if (data?.[1] === 'application/pdf') {
    return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: data[2] }, ...title };
  }
  if (data?.[1] === 'text/plain') {
    const text = Buffer.from(data[2], 'base64').toString('utf8');
    return { type: 'document', source: { type: 'text', media_type: 'text/plain', data: text }, ...title };
  }
  unsupported(param, 'anthropic accepts files sent inline as file_data data URLs of application/pdf or text/plain.');
  return undefined;
}

function assistantBlocks(
  message: Extract<CanonicalMessage, { role: 'assistant' }>,
  at: string,
  unsupported: Unsupported,
): AnthropicBlock[] {
  const blocks: AnthropicBlock[] = [];
  // Thinking goes back only with its signature: Anthropic verifies it, and rejects unsigned
  // thinking (reasoning text from another provider cannot be replayed as Claude's own).
  if (message.reasoning_signature) {
    blocks.push({ type: 'thinking', thinking: message.reasoning_content ?? '', signature: message.reasoning_signature });
  }
  const content = message.content;
  if (typeof content === 'string') blocks.push(...textBlocks(content));
  else if (Array.isArray(content)) {
    content.forEach((part, j) => {
      if (part.type === 'text' && typeof part.text === 'string') blocks.push(...textBlocks(part.text));
      else if (part.type === 'refusal' && typeof part.refusal === 'string') blocks.push(...textBlocks(part.refusal));
      else unsupported(`${at}.content[${j}]`, `anthropic accepts only text in assistant messages, not '${part.type}' parts.`);
    });
  }
  message.tool_calls?.forEach((call, j) => {
    blocks.push({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: parseToolArguments(call.function.arguments, 'anthropic', `${at}.tool_calls[${j}].function.arguments`),
    });
  });
  return blocks;
}

/** `cache_control` on a message or on one of its parts. */
function cacheControlOf(holder: object, at: string): CacheControl | undefined {
  const value = (holder as { cache_control?: unknown }).cache_control;
  if (value === undefined || value === null) return undefined;
  const cc = value as { type?: unknown; ttl?: unknown };
  if (typeof value !== 'object' || cc.type !== 'ephemeral' || (cc.ttl !== undefined && typeof cc.ttl !== 'string')) {
    throw errors.invalidRequest('cache_control must be {"type": "ephemeral"} with an optional "ttl".', `${at}.cache_control`);
  }
  return cc.ttl === undefined ? { type: 'ephemeral' } : { type: 'ephemeral', ttl: cc.ttl };
}

function withCache<B extends AnthropicBlock>(blocks: B[], cache: CacheControl | undefined): B[] {
  if (!cache || blocks.length === 0) return blocks;
  return [...blocks.slice(0, -1), { ...blocks[blocks.length - 1], cache_control: cache }];
}
