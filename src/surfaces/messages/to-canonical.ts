import { errors } from '../../errors/catalog.ts';
import type {
  CanonicalAssistantMessage,
  CanonicalMessage,
  CanonicalRequest,
  CanonicalTextPart,
  CanonicalTool,
  CanonicalToolChoice,
  CanonicalUserPart,
  ReasoningEffort,
} from '../../protocol/canonical/request.ts';
import { enabledBudget } from './parse-request.ts';
import {
  type MessagesContentBlock,
  type MessagesDocumentBlock,
  type MessagesImageBlock,
  type MessagesRequest,
  type MessagesSource,
  type MessagesTextBlock,
  type MessagesThinkingBlock,
  type MessagesToolResultBlock,
  type MessagesToolUseBlock,
  TRANSLATED_FIELDS,
} from './request-schema.ts';

export interface ToCanonicalOptions {
  /** The target's `drop_params`: leave out what it cannot honour instead of answering 400. */
  dropParams: boolean;
  /** The target honours `cache_control` (Anthropic, Bedrock); elsewhere it is left out, silently. */
  keepCacheControl: boolean;
}

/**
 * The thinking budget as the canonical effort: the highest level whose budget fits in it (the
 * levels are the budgets the Anthropic adapter sends for each effort, providers/anthropic/thinking.ts).
 */
const EFFORT_BUDGETS: [ReasoningEffort, number][] = [
  ['xhigh', 24576],
  ['high', 16384],
  ['medium', 8192],
  ['low', 4096],
  ['minimal', 1024],
];

type Refuse = (param: string, why: string) => void;

/**
 * A Messages request for a target other than Anthropic (which gets the body as sent): the
 * conversation, tools and settings in canonical form. What has no canonical counterpart (server
 * tools, Files API sources, Anthropic-only fields) is a 400 naming it, or left out with drop_params.
 */
export function messagesToCanonical(req: MessagesRequest, options: ToCanonicalOptions): CanonicalRequest {
  const refuse: Refuse = (param, why) => {
    if (!options.dropParams) throw errors.invalidRequest(`${param}: ${why}`, param);
  };
  for (const field of Object.keys(req)) {
    if (!TRANSLATED_FIELDS.has(field)) refuse(field, `'${field}' is only available with Anthropic models.`);
  }
  const cache = (value: unknown) => (options.keepCacheControl && value != null ? { cache_control: value } : {});
  const out: CanonicalRequest = {
    model: req.model,
    messages: conversation(req, refuse, cache),
    max_completion_tokens: req.max_tokens,
  };
  if (req.temperature !== undefined) out.temperature = req.temperature;
  if (req.top_p !== undefined) out.top_p = req.top_p;
  if (req.top_k !== undefined) out.extra = { top_k: req.top_k };
  if (req.stop_sequences?.length) out.stop = req.stop_sequences;
  if (req.metadata?.user_id) out.user = req.metadata.user_id;
  if (req.service_tier) out.service_tier = req.service_tier === 'standard_only' ? 'default' : 'auto';
  const effort = reasoningEffort(req, refuse);
  if (effort) out.reasoning_effort = effort;
  const tools = toolsOf(req, refuse);
  if (tools.length > 0) out.tools = tools;
  const choice = req.tool_choice;
  if (choice) {
    out.tool_choice = toolChoiceOf(choice);
    if ('disable_parallel_tool_use' in choice && choice.disable_parallel_tool_use) out.parallel_tool_calls = false;
  }
  return out;
}

/** The system prompt, then each turn (a user turn may become several messages, an empty assistant turn none). */
function conversation(req: MessagesRequest, refuse: Refuse, cache: Cache): CanonicalMessage[] {
  const messages: CanonicalMessage[] = [];
  if (req.system !== undefined) {
    const content = typeof req.system === 'string' ? req.system : req.system.map((b) => textPart(b, cache));
    messages.push({ role: 'system', content });
  }
  req.messages.forEach((message, i) => {
    const at = `messages[${i}]`;
    if (typeof message.content === 'string') {
      messages.push({ role: message.role, content: message.content });
    } else if (message.role === 'user') {
      messages.push(...userTurn(message.content, at, refuse, cache));
    } else {
      const turn = assistantTurn(message.content, at, refuse, cache);
      if (turn) messages.push(turn);
    }
  });
  return messages;
}

/** An enabled thinking budget as the canonical effort; any other thinking but `disabled` is Anthropic's own. */
function reasoningEffort(req: MessagesRequest, refuse: Refuse): ReasoningEffort | undefined {
  const budget = enabledBudget(req);
  if (budget !== undefined) return effortOf(budget);
  if (req.thinking && req.thinking.type !== 'disabled') {
    refuse('thinking.type', `thinking of type '${req.thinking.type}' is only available with Anthropic models.`);
  }
  return undefined;
}

function effortOf(budget: number): ReasoningEffort {
  return EFFORT_BUDGETS.find(([, b]) => budget >= b)?.[0] ?? 'minimal';
}

type Cache = (value: unknown) => { cache_control?: unknown };

function textPart(block: MessagesTextBlock, cache: Cache): CanonicalTextPart {
  return { type: 'text', text: block.text, ...cache(block.cache_control) };
}

/**
 * A user turn: its tool_result blocks become tool messages, in order and first (OpenAI-style
 * conversations answer the calls before the next user text), the other blocks one user message.
 */
function userTurn(blocks: MessagesContentBlock[], at: string, refuse: Refuse, cache: Cache): CanonicalMessage[] {
  const results: CanonicalMessage[] = [];
  const parts: CanonicalUserPart[] = [];
  blocks.forEach((block, j) => {
    const param = `${at}.content[${j}]`;
    switch (block.type) {
      case 'text':
        parts.push(textPart(as<MessagesTextBlock>(block), cache));
        break;
      case 'image': {
        const url = mediaUrl(as<MessagesImageBlock>(block).source, param, refuse, 'image');
        if (url) parts.push({ type: 'image_url', image_url: { url } });
        break;
      }
      case 'document': {
        const document = as<MessagesDocumentBlock>(block);
        const file = documentData(document.source, `${param}.source`, refuse);
        const title = typeof document.title === 'string' ? { filename: document.title } : {};
        if (file) parts.push({ type: 'file', file: { file_data: file, ...title } });
        break;
      }
      case 'tool_result':
        results.push(toolResult(as<MessagesToolResultBlock>(block), param, refuse, cache));
        break;
      default:
        refuse(`${param}.type`, `'${block.type}' blocks are only available with Anthropic models.`);
    }
  });
  return parts.length > 0 ? [...results, { role: 'user', content: parts }] : results;
}

/** A block whose type was checked against its schema (request-schema.ts byType). */
const as = <T>(block: MessagesContentBlock) => block as unknown as T;
type Source = MessagesSource & { media_type?: unknown; data?: unknown; url?: unknown };

function mediaUrl(source: Source, param: string, refuse: Refuse, what: string): string | undefined {
  if (source.type === 'base64' && typeof source.media_type === 'string' && typeof source.data === 'string') {
    return `data:${source.media_type};base64,${source.data}`;
  }
  if (source.type === 'url' && typeof source.url === 'string') return source.url;
  refuse(`${param}.source`, `an ${what} needs a base64 or url source here (a '${source.type}' source is Anthropic's own).`);
  return undefined;
}

/** A document as a data URL: base64 (a PDF) as sent, plain text encoded. */
function documentData(source: Source, param: string, refuse: Refuse): string | undefined {
  if (source.type === 'base64' && typeof source.media_type === 'string' && typeof source.data === 'string') {
    return `data:${source.media_type};base64,${source.data}`;
  }
  if (source.type === 'text' && typeof source.data === 'string') {
    return `data:text/plain;base64,${Buffer.from(source.data, 'utf8').toString('base64')}`;
  }
  refuse(param, `a document needs a base64 or text source here (a '${source.type}' source is Anthropic's own).`);
  return undefined;
}

function toolResult(block: MessagesToolResultBlock, param: string, refuse: Refuse, cache: Cache): CanonicalMessage {
  let content: string | CanonicalTextPart[] = '';
  if (typeof block.content === 'string') content = block.content;
  else if (block.content) {
    content = [];
    for (const [k, part] of block.content.entries()) {
      if (part.type === 'text' && typeof part.text === 'string') content.push({ type: 'text', text: part.text });
      else refuse(`${param}.content[${k}]`, `a tool result can carry only text here, not '${part.type}' blocks.`);
    }
  }
  // The canonical tool message has no error flag: the model reads the failure from the text.
  if (block.is_error)
    content = typeof content === 'string' ? `Error: ${content}` : [{ type: 'text', text: 'Error:' }, ...content];
  return { role: 'tool', tool_call_id: block.tool_use_id, content, ...cache(block.cache_control) };
}

/**
 * An assistant turn: text, the tool calls, and the signed thinking (the reasoning round trip:
 * providers send it back where they can). Redacted thinking is Claude's alone and has no
 * meaning for another model: it is left out.
 */
function assistantTurn(
  blocks: MessagesContentBlock[],
  at: string,
  refuse: Refuse,
  cache: Cache,
): CanonicalAssistantMessage | null {
  const message: CanonicalAssistantMessage = { role: 'assistant' };
  const text: CanonicalTextPart[] = [];
  blocks.forEach((block, j) => {
    const param = `${at}.content[${j}]`;
    switch (block.type) {
      case 'text':
        text.push(textPart(as<MessagesTextBlock>(block), cache));
        break;
      case 'thinking': {
        const b = as<MessagesThinkingBlock>(block);
        message.reasoning_content = (message.reasoning_content ?? '') + b.thinking;
        message.reasoning_signature = b.signature;
        break;
      }
      case 'redacted_thinking':
        break;
      case 'tool_use': {
        const b = as<MessagesToolUseBlock>(block);
        (message.tool_calls ??= []).push({
          id: b.id,
          type: 'function',
          function: { name: b.name, arguments: JSON.stringify(b.input) },
        });
        break;
      }
      default:
        refuse(`${param}.type`, `'${block.type}' blocks are only available with Anthropic models.`);
    }
  });
  if (text.length > 0)
    message.content = text.every((p) => p.cache_control === undefined) ? text.map((p) => p.text).join('') : text;
  if (!message.content && !message.tool_calls && !message.reasoning_signature) return null;
  return message;
}

function toolsOf(req: MessagesRequest, refuse: Refuse): CanonicalTool[] {
  const tools: CanonicalTool[] = [];
  req.tools?.forEach((tool, i) => {
    if (tool.type !== undefined && tool.type !== 'custom') {
      refuse(`tools[${i}].type`, `the server tool '${tool.type}' is only available with Anthropic models.`);
      return;
    }
    const fn: { name: string; description?: string; parameters?: Record<string, unknown> } = { name: tool.name };
    if (tool.description !== undefined) fn.description = tool.description;
    if (tool.input_schema !== undefined) fn.parameters = tool.input_schema;
    tools.push({ type: 'function', function: fn });
  });
  return tools;
}

function toolChoiceOf(choice: NonNullable<MessagesRequest['tool_choice']>): CanonicalToolChoice {
  switch (choice.type) {
    case 'auto':
      return 'auto';
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return { type: 'function', function: { name: choice.name } };
  }
}
