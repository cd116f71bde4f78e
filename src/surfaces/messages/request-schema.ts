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

/**
 * An object whose `type` picks its schema: a known type is held to it (its error names the
 * field, where a union would only say "does not match any accepted shape"); any other type is
 * accepted as sent, for an Anthropic target (server tool results, search results, Files API
 * sources); the translation for other targets refuses it, naming it.
 */
function byType(schemas: Record<string, z.ZodType>) {
  return z.looseObject({ type: z.string() }).superRefine((value, ctx) => {
    const schema = Object.hasOwn(schemas, value.type) ? schemas[value.type] : undefined;
    const result = schema?.safeParse(value);
    if (result && !result.success) for (const issue of result.error.issues) ctx.addIssue({ ...issue, path: issue.path } as never);
  });
}

const source = byType({
  base64: z.looseObject({ media_type: z.string().min(1), data: z.string() }),
  url: z.looseObject({ url: z.string().min(1) }),
  text: z.looseObject({ data: z.string() }),
});

const imageBlock = z.looseObject({ source, cache_control: cacheControl });
const documentBlock = z.looseObject({
  source,
  title: z.string().nullable().optional(),
  context: z.string().nullable().optional(),
  cache_control: cacheControl,
});
const toolResultBlock = z.looseObject({
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).optional(),
  is_error: z.boolean().optional(),
  cache_control: cacheControl,
});
const thinkingBlock = z.looseObject({ thinking: z.string(), signature: z.string() });
const toolUseBlock = z.looseObject({
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
  cache_control: cacheControl,
});

const contentBlock = byType({
  text: textBlock,
  image: imageBlock,
  document: documentBlock,
  tool_result: toolResultBlock,
  thinking: thinkingBlock,
  redacted_thinking: z.looseObject({ data: z.string() }),
  tool_use: toolUseBlock,
});

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

/** `enabled` with its budget, or `disabled`; a newer mode (adaptive thinking) is Anthropic's to judge. */
const enabledThinking = z.looseObject({ type: z.literal('enabled'), budget_tokens: z.number().int().min(1024) });
const thinking = byType({ enabled: enabledThinking, disabled: z.looseObject({}) });

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
export type MessagesEnabledThinking = z.infer<typeof enabledThinking>;
/** The blocks sluice translates, as validated (byType checked the block against its schema). */
export type MessagesImageBlock = z.infer<typeof imageBlock>;
export type MessagesDocumentBlock = z.infer<typeof documentBlock>;
export type MessagesToolResultBlock = z.infer<typeof toolResultBlock>;
export type MessagesThinkingBlock = z.infer<typeof thinkingBlock>;
export type MessagesToolUseBlock = z.infer<typeof toolUseBlock>;
export type MessagesSource = z.infer<typeof source>;

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
