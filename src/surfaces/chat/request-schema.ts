import { z } from 'zod';

/**
 * The /v1/chat/completions body. Strict on what sluice reads (types, ranges, roles), loose on
 * fields it does not know, which are passed through to OpenAI-compatible upstreams untouched
 * (provider-specific options such as OpenRouter's `provider` or vLLM's `top_k`).
 */
// Loose: providers read part-level extras such as Anthropic's `cache_control`.
const textPart = z.looseObject({ type: z.literal('text'), text: z.string() });
const imagePart = z.object({
  type: z.literal('image_url'),
  image_url: z.object({ url: z.string().min(1), detail: z.enum(['auto', 'low', 'high']).optional() }),
});
const audioPart = z.object({
  type: z.literal('input_audio'),
  input_audio: z.object({ data: z.string(), format: z.string() }),
});
const filePart = z.object({
  type: z.literal('file'),
  file: z.looseObject({ file_data: z.string().optional(), file_id: z.string().optional(), filename: z.string().optional() }),
});
const userContentPart = z.discriminatedUnion('type', [textPart, imagePart, audioPart, filePart]);

const toolCall = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

const systemMessage = z.looseObject({
  role: z.enum(['system', 'developer']),
  content: z.union([z.string(), z.array(textPart)]),
  name: z.string().optional(),
});
const userMessage = z.looseObject({
  role: z.literal('user'),
  content: z.union([z.string(), z.array(userContentPart)]),
  name: z.string().optional(),
});
const refusalPart = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });
/**
 * An assistant part of another type (Mistral's `thinking` chunks in a replayed turn) goes to
 * OpenAI-compatible upstreams as sent; text and refusal parts are checked like any other.
 */
const otherAssistantPart = z.looseObject({ type: z.string() }).superRefine((part, ctx) => {
  if (part.type === 'text' || part.type === 'refusal') {
    ctx.addIssue({ code: 'custom', message: `a ${part.type} part needs it as a string`, path: [part.type] });
  }
});
const assistantPart = z.union([textPart, refusalPart, otherAssistantPart]);

const assistantMessage = z.looseObject({
  role: z.literal('assistant'),
  content: z.union([z.string(), z.array(assistantPart), z.null()]).optional(),
  refusal: z.string().nullable().optional(),
  tool_calls: z.array(toolCall).optional(),
  name: z.string().optional(),
  // Reasoning round trip (see docs/providers.md "Reasoning round trip"): what sluice sent as reasoning_content comes back here.
  reasoning_content: z.string().nullable().optional(),
  reasoning_signature: z.string().nullable().optional(),
});
const toolMessage = z.looseObject({
  role: z.literal('tool'),
  content: z.union([z.string(), z.array(textPart)]),
  tool_call_id: z.string(),
});
const functionMessage = z.looseObject({ role: z.literal('function'), content: z.string().nullable(), name: z.string() });

export const chatMessage = z.discriminatedUnion('role', [
  systemMessage,
  userMessage,
  assistantMessage,
  toolMessage,
  functionMessage,
]);

const functionTool = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or -'),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullable().optional(),
  }),
});

/**
 * A tool the upstream runs itself (OpenRouter's `openrouter:web_search`, a vendor's hosted tools):
 * passed through to OpenAI-compatible upstreams as sent; a native provider answers 400 naming it.
 */
const hostedTool = z
  .looseObject({ type: z.string() })
  .refine((tool) => tool.type !== 'function', { message: 'a function tool needs its `function` object', path: ['function'] });

const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: z.string() }) }),
]);

const responseFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({
    type: z.literal('json_schema'),
    json_schema: z.object({
      name: z.string(),
      description: z.string().optional(),
      schema: z.record(z.string(), z.unknown()).optional(),
      strict: z.boolean().nullable().optional(),
    }),
  }),
]);

const tokenCount = z.number().int().positive();

export const chatRequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(chatMessage).min(1),
  stream: z.boolean().nullable().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).loose().nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().min(0).max(1).nullable().optional(),
  n: z.number().int().min(1).max(128).nullable().optional(),
  max_tokens: tokenCount.nullable().optional(),
  max_completion_tokens: tokenCount.nullable().optional(),
  stop: z
    .union([z.string(), z.array(z.string()).max(4)])
    .nullable()
    .optional(),
  presence_penalty: z.number().min(-2).max(2).nullable().optional(),
  frequency_penalty: z.number().min(-2).max(2).nullable().optional(),
  logit_bias: z.record(z.string(), z.number().min(-100).max(100)).nullable().optional(),
  logprobs: z.boolean().nullable().optional(),
  top_logprobs: z.number().int().min(0).max(20).nullable().optional(),
  seed: z.number().int().nullable().optional(),
  user: z.string().optional(),
  metadata: z.record(z.string(), z.string()).nullable().optional(),
  tools: z.array(z.union([functionTool, hostedTool])).optional(),
  tool_choice: toolChoice.optional(),
  parallel_tool_calls: z.boolean().optional(),
  response_format: responseFormat.optional(),
  reasoning_effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']).nullable().optional(),
  service_tier: z.string().nullable().optional(),
});

export type ChatRequest = z.infer<typeof chatRequestSchema>;
export type ChatMessage = z.infer<typeof chatMessage>;
export type ChatTextPart = z.infer<typeof textPart>;
