import { z } from 'zod';

/**
 * The /v1/responses body: every parameter of OpenAI's Responses API (the openai SDK's
 * ResponseCreateParamsBase), and nothing else. Strict: an unknown field is a 400 naming it. What
 * each parameter does on a translated target is to-canonical.ts's business; the few that sluice
 * cannot honour there and whose absence would change the answer (a hosted tool, a background run,
 * a stored prompt or conversation) are refused by unhonoured.ts, never silently ignored.
 */
const inputText = z.object({ type: z.literal('input_text'), text: z.string() });
const inputImage = z.object({
  type: z.literal('input_image'),
  image_url: z.string().min(1),
  detail: z.enum(['auto', 'low', 'high', 'original']).optional(),
});
const outputText = z.looseObject({ type: z.literal('output_text'), text: z.string() });
const refusalPart = z.object({ type: z.literal('refusal'), refusal: z.string() });
const contentPart = z.discriminatedUnion('type', [inputText, inputImage, outputText, refusalPart]);

const messageItem = z.looseObject({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([z.string(), z.array(contentPart)]),
  id: z.string().optional(),
  status: z.string().optional(),
});
const functionCallItem = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
  id: z.string().optional(),
});
const functionCallOutputItem = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: z.string(),
  output: z.union([z.string(), z.array(inputText)]),
});
const reasoningItem = z.looseObject({
  type: z.literal('reasoning'),
  id: z.string().optional(),
  summary: z.array(z.object({ type: z.literal('summary_text'), text: z.string() })).default([]),
  encrypted_content: z.string().nullable().optional(),
});

export const inputItem = z.union([messageItem, functionCallItem, functionCallOutputItem, reasoningItem]);

const functionTool = z.strictObject({
  type: z.literal('function'),
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or -'),
  description: z.string().nullable().optional(),
  parameters: z.record(z.string(), z.unknown()).nullable().optional(),
  strict: z.boolean().nullable().optional(),
  // Accepted and not needed: sluice offers every tool up front (no tool search), the client calls
  // it directly, and the output schema only describes what the client sends back.
  defer_loading: z.boolean().optional(),
  allowed_callers: z
    .array(z.enum(['direct', 'programmatic']))
    .nullable()
    .optional(),
  async: z.boolean().optional(),
  output_schema: z.record(z.string(), z.unknown()).nullable().optional(),
});

/** Several tools named at once: the model may call only those (`mode: required`: one of them). */
const allowedTools = z.strictObject({
  type: z.literal('allowed_tools'),
  mode: z.enum(['auto', 'required']),
  tools: z.array(z.looseObject({ type: z.string(), name: z.string().optional() })),
});

const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.object({ type: z.literal('function'), name: z.string() }),
  allowedTools,
  // A hosted tool's choice (web_search_preview, mcp, custom, shell, ...): refused like the tool.
  z.looseObject({ type: z.string() }),
]);

const textFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.strictObject({
    type: z.literal('json_schema'),
    name: z.string(),
    schema: z.record(z.string(), z.unknown()),
    description: z.string().optional(),
    strict: z.boolean().nullable().optional(),
  }),
]);

export const responsesRequestSchema = z.strictObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(inputItem)]),
  instructions: z.string().nullable().optional(),
  tools: z.array(functionTool).optional(),
  tool_choice: toolChoice.optional(),
  /** Enforced by sluice: calls past the limit are left out of the response. */
  max_tool_calls: z.number().int().nonnegative().nullable().optional(),
  parallel_tool_calls: z.boolean().nullable().optional(),
  max_output_tokens: z.number().int().positive().nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().min(0).max(1).nullable().optional(),
  reasoning: z
    .strictObject({
      effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']).nullable().optional(),
      summary: z.enum(['auto', 'concise', 'detailed']).nullable().optional(),
      generate_summary: z.enum(['auto', 'concise', 'detailed']).nullable().optional(),
      context: z.enum(['auto', 'current_turn', 'all_turns']).nullable().optional(),
      mode: z.string().nullable().optional(),
    })
    .nullable()
    .optional(),
  text: z
    .strictObject({ format: textFormat.optional(), verbosity: z.enum(['low', 'medium', 'high']).nullable().optional() })
    .optional(),
  metadata: z.record(z.string(), z.string()).nullable().optional(),
  stream: z.boolean().nullable().optional(),
  store: z.boolean().nullable().optional(),
  previous_response_id: z.string().nullable().optional(),
  user: z.string().optional(),
  /** Fallbacks in the OpenRouter way, read by routing (src/routing/request-routing.ts), never sent upstream. */
  models: z.array(z.string()).optional(),
  /** Used with `include: ["message.output_text.logprobs"]`, where the target has logprobs. */
  top_logprobs: z.number().int().min(0).max(20).nullable().optional(),
  include: z.array(z.string()).nullable().optional(),
  service_tier: z.string().nullable().optional(),
  stream_options: z.looseObject({}).nullable().optional(),
  // Forwarded to OpenAI-compatible upstreams (Chat Completions has them too); hints elsewhere.
  prompt_cache_key: z.string().nullable().optional(),
  prompt_cache_retention: z.string().nullable().optional(),
  prompt_cache_options: z.looseObject({}).nullable().optional(),
  safety_identifier: z.string().nullable().optional(),
  // Harmless to accept: sluice never truncates the input (`auto` lets OpenAI drop the oldest items
  // of an overlong one instead of failing; a translated target fails it as it would have), and an
  // image compression policy is an optimisation.
  truncation: z.enum(['auto', 'disabled']).nullable().optional(),
  image: z.looseObject({}).nullable().optional(),
  // OpenAI's own services: refused on translated targets when asked for (unhonoured.ts).
  background: z.boolean().nullable().optional(),
  conversation: z
    .union([z.string(), z.looseObject({ id: z.string() })])
    .nullable()
    .optional(),
  prompt: z.looseObject({ id: z.string() }).nullable().optional(),
  moderation: z.looseObject({ model: z.string() }).nullable().optional(),
  context_management: z
    .array(z.looseObject({ type: z.string() }))
    .nullable()
    .optional(),
  access_programs: z.looseObject({ cyber: z.string().optional() }).nullable().optional(),
});

export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;
export type ResponsesInputItem = z.infer<typeof inputItem>;
