import { z } from 'zod';

/**
 * The POST /v1/messages body (Anthropic Messages API, version 2023-06-01). Strict on what sluice
 * reads (types, ranges, roles, the blocks it translates); loose elsewhere, because an Anthropic
 * target receives the body as sent (new fields and block types keep working there), and the
 * translation to the canonical request refuses, naming it, whatever another target cannot honour.
 */

/** `{"type":"ephemeral","ttl":"1h"}`, checked where it is honoured (Anthropic); ignored elsewhere. */
const cacheControl = z.unknown().optional();

const textBlock = z.looseObject({ type: z.literal('text'), text: z.string(), cache_control: cacheControl });

const base64Source = z.looseObject({ type: z.literal('base64'), media_type: z.string().min(1), data: z.string() });
const urlSource = z.looseObject({ type: z.literal('url'), url: z.string().min(1) });
const imageBlock = z.looseObject({
  type: z.literal('image'),
  // Other sources (`file`: the Files API) are Anthropic's own: relayed, refused by translation.
  source: z.looseObject({ type: z.string() }),
  cache_control: cacheControl,
});
const documentBlock = z.looseObject({
  type: z.literal('document'),
  source: z.looseObject({ type: z.string() }),
  title: z.string().nullable().optional(),
  context: z.string().nullable().optional(),
  cache_control: cacheControl,
});
const toolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).optional(),
  is_error: z.boolean().optional(),
  cache_control: cacheControl,
});
const thinkingBlock = z.looseObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() });
const redactedThinkingBlock = z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() });
const toolUseBlock = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
  cache_control: cacheControl,
});

const KNOWN_BLOCKS = ['text', 'image', 'document', 'tool_result', 'thinking', 'redacted_thinking', 'tool_use'];

/**
 * A block of a type sluice does not translate (server tool results, search results, containers):
 * an Anthropic target receives it; a known type is held to its own schema above, so its error
 * names the field instead of "does not match any accepted shape".
 */
const otherBlock = z.looseObject({ type: z.string() }).superRefine((block, ctx) => {
  if (KNOWN_BLOCKS.includes(block.type)) ctx.addIssue({ code: 'custom', message: `is not a valid ${block.type} block` });
});

const contentBlock = z.union([
  textBlock,
  imageBlock,
  documentBlock,
  toolResultBlock,
  thinkingBlock,
  redactedThinkingBlock,
  toolUseBlock,
  otherBlock,
]);

const message = z.looseObject({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(contentBlock)]),
});

const customTool = z.looseObject({
  // Custom tools may say `type: "custom"`; server tools (web_search_20250305, bash_…) have their own type.
  type: z.string().optional(),
  name: z.string().min(1),
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()).optional(),
  cache_control: cacheControl,
});

const toolChoice = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal('tool'), name: z.string().min(1), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal('none') }),
]);

const thinking = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('enabled'), budget_tokens: z.number().int().min(1024) }),
  z.looseObject({ type: z.literal('disabled') }),
]);

export const messagesRequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(message),
  max_tokens: z.number().int().min(1),
  system: z.union([z.string(), z.array(textBlock)]).optional(),
  metadata: z.looseObject({ user_id: z.string().nullable().optional() }).optional(),
  stop_sequences: z.array(z.string()).optional(),
  stream: z.boolean().optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  tools: z.array(customTool).optional(),
  tool_choice: toolChoice.optional(),
  thinking: thinking.optional(),
  service_tier: z.enum(['auto', 'standard_only']).optional(),
});

export type MessagesRequest = z.infer<typeof messagesRequestSchema>;
export type MessagesContentBlock = z.infer<typeof contentBlock>;
export type MessagesTextBlock = z.infer<typeof textBlock>;

/** The fields translated into the canonical request; any other top-level field is Anthropic's own. */
export const TRANSLATED_FIELDS = new Set([
  'model',
  'messages',
  'max_tokens',
  'system',
  'metadata',
  'stop_sequences',
  'stream',
  'temperature',
  'top_p',
  'top_k',
  'tools',
  'tool_choice',
  'thinking',
  'service_tier',
]);
