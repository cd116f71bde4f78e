import { errors } from '../../errors/catalog.ts';
import type { CanonicalMessage } from '../../protocol/canonical/request.ts';
import { parseToolArguments } from '../parse-tool-arguments.ts';

/** Converse content blocks (a union keyed by the member's name, no `type` tag). */
export type ConverseBlock =
  | { text: string }
  | { image: { format: string; source: { bytes: string } } }
  | { toolUse: { toolUseId: string; name: string; input: unknown } }
  | { toolResult: { toolUseId: string; content: { text: string }[] } }
  | { reasoningContent: { reasoningText: { text: string; signature: string } } }
  | CachePoint;

/** A prompt-caching checkpoint: the prefix up to it is cached (Converse "Prompt caching"). */
export type CachePoint = { cachePoint: { type: 'default' } };
export type SystemBlock = { text: string } | CachePoint;

export interface ConverseMessage {
  role: 'user' | 'assistant';
  content: ConverseBlock[];
}

export interface ConverseConversation {
  system: SystemBlock[];
  messages: ConverseMessage[];
}

/** The image formats Converse takes (ImageBlock.format), by the data URL's media type. */
const imageFormats: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/**
 * Canonical messages -> Converse's `system` and `messages`. System and developer messages may appear
 * anywhere in a chat request; Converse has one top-level system list, so they are collected there
 * in order. Converse rejects two messages of the same role in a row, and tool results travel as
 * `toolResult` blocks of a user message, so adjacent messages of one role (the results of one
 * parallel tool turn, a user message after them) are merged into one. Anthropic's `cache_control`
 * (on a text part, or on a whole message: its last block) becomes a `cachePoint` after that block.
 */
export function convertMessages(messages: CanonicalMessage[]): ConverseConversation {
  const system: SystemBlock[] = [];
  const out: ConverseMessage[] = [];
  const append = (role: ConverseMessage['role'], blocks: ConverseBlock[]) => {
    if (blocks.length === 0) return;
    const last = out.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  messages.forEach((m, i) => {
    const cached = <B>(blocks: B[]): (B | CachePoint)[] => withCachePoint(blocks, m, `messages[${i}]`);
    switch (m.role) {
      case 'system':
        system.push(...cached(systemBlocks(m.content, i)));
        return;
      case 'user':
        append('user', cached(userBlocks(m.content, i)));
        return;
      case 'assistant':
        append('assistant', cached(assistantBlocks(m, i)));
        return;
      case 'tool':
        append(
          'user',
          cached([{ toolResult: { toolUseId: m.tool_call_id, content: texts(m.content).map((text) => ({ text })) } }]),
        );
        return;
      case 'function':
        throw errors.invalidRequest(
          'Bedrock does not take the deprecated `function` role: send the result as a `tool` message.',
          `messages[${i}].role`,
        );
    }
  });
  return { system, messages: out };
}

/** `cache_control` on a message or part: `{"type":"ephemeral"}` (a ttl is Anthropic's alone, and ignored here). */
function wantsCache(holder: object, param: string): boolean {
  const value = (holder as { cache_control?: unknown }).cache_control;
  if (value === undefined || value === null) return false;
  if (typeof value !== 'object' || (value as { type?: unknown }).type !== 'ephemeral') {
    throw errors.invalidRequest('cache_control must be {"type": "ephemeral"} with an optional "ttl".', `${param}.cache_control`);
  }
  return true;
}

const CACHE_POINT: CachePoint = { cachePoint: { type: 'default' } };

/** The message's blocks with a cache point after the last one when the message asks to be cached. */
function withCachePoint<B>(blocks: B[], message: object, param: string): (B | CachePoint)[] {
  return blocks.length > 0 && wantsCache(message, param) ? [...blocks, CACHE_POINT] : blocks;
}

function systemBlocks(content: Extract<CanonicalMessage, { role: 'system' }>['content'], i: number): SystemBlock[] {
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  return content.flatMap((part, j): SystemBlock[] => {
    if (!part.text) return [];
    return wantsCache(part, `messages[${i}].content[${j}]`) ? [{ text: part.text }, CACHE_POINT] : [{ text: part.text }];
  });
}

function texts(content: string | { text: string }[]): string[] {
  return typeof content === 'string' ? [content] : content.map((p) => p.text);
}

function userBlocks(content: Extract<CanonicalMessage, { role: 'user' }>['content'], i: number): ConverseBlock[] {
  if (typeof content === 'string') return [{ text: content }];
  return content.flatMap((part, j): ConverseBlock[] => {
    const param = `messages[${i}].content[${j}]`;
    switch (part.type) {
      case 'text':
        return wantsCache(part, param) ? [{ text: part.text }, CACHE_POINT] : [{ text: part.text }];
      case 'image_url':
        return [{ image: imageBlock(part.image_url.url, `${param}.image_url.url`) }];
      default:
        throw errors.invalidRequest(
          `Bedrock Converse does not take \`${part.type}\` content parts through sluice.`,
          `${param}.type`,
        );
    }
  });
}

/** Converse wants the image bytes (ImageSource.bytes); it cannot fetch a URL. */
function imageBlock(url: string, param: string): { format: string; source: { bytes: string } } {
  const match = /^data:([^;,]+)((?:;[^;,]*)*),(.*)$/s.exec(url);
  if (!match) {
    throw errors.invalidRequest(
      'Bedrock Converse needs the image bytes: send the image as a base64 data URL (data:image/png;base64,…).',
      param,
    );
  }
  const [, mediaType, params, data] = match;
  const format = imageFormats[mediaType.toLowerCase()];
  if (!format) throw errors.invalidRequest(`Bedrock Converse takes png, jpeg, gif or webp images, not ${mediaType}.`, param);
  if (!params.split(';').includes('base64')) throw errors.invalidRequest('The image data URL must be base64-encoded.', param);
  return { format, source: { bytes: data } };
}

function assistantBlocks(m: Extract<CanonicalMessage, { role: 'assistant' }>, i: number): ConverseBlock[] {
  const blocks: ConverseBlock[] = [];
  // Thinking comes first in the turn it belongs to; without its signature Anthropic models refuse
  // the block, so unsigned reasoning (display text only) is not sent back.
  if (m.reasoning_content && m.reasoning_signature) {
    blocks.push({ reasoningContent: { reasoningText: { text: m.reasoning_content, signature: m.reasoning_signature } } });
  }
  const content = m.content;
  if (typeof content === 'string') {
    if (content) blocks.push({ text: content });
  } else if (Array.isArray(content)) {
    content.forEach((part, j) => {
      const text = part.type === 'text' ? part.text : part.type === 'refusal' ? part.refusal : undefined;
      if (typeof text !== 'string') {
        throw errors.invalidRequest(
          `Assistant content parts must be text or refusal, not ${part.type}.`,
          `messages[${i}].content[${j}]`,
        );
      }
      if (text) blocks.push({ text });
    });
  }
  if (m.refusal && !content) blocks.push({ text: m.refusal });
  m.tool_calls?.forEach((call, j) => {
    blocks.push({
      toolUse: {
        toolUseId: call.id,
        name: call.function.name,
        input: parseToolArguments(call.function.arguments, 'bedrock', `messages[${i}].tool_calls[${j}].function.arguments`),
      },
    });
  });
  return blocks;
}
