import { z } from 'zod';

/**
 * The /v1/responses body. Strict: a field sluice would silently ignore is a 400 naming it, so a
 * client never believes a hosted tool or a background run happened when it did not.
 */
const inputText = z.object({ type: z.literal('input_text'), text: z.string() });
const inputImage = z.object({
  type: z.literal('input_image'),
  image_url: z.string().min(1),
  detail: z.enum(['auto', 'low', 'high']).optional(),
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
});

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
  tool_choice: z
    .union([z.enum(['none', 'auto', 'required']), z.object({ type: z.literal('function'), name: z.string() })])
    .optional(),
  parallel_tool_calls: z.boolean().nullable().optional(),
  max_output_tokens: z.number().int().positive().nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().min(0).max(1).nullable().optional(),
  reasoning: z
    .strictObject({
      effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']).nullable().optional(),
      summary: z.enum(['auto', 'concise', 'detailed']).nullable().optional(),
    })
    .nullable()
    .optional(),
  text: z.strictObject({ format: textFormat.optional(), verbosity: z.string().optional() }).optional(),
  metadata: z.record(z.string(), z.string()).nullable().optional(),
  stream: z.boolean().nullable().optional(),
  store: z.boolean().nullable().optional(),
  previous_response_id: z.string().nullable().optional(),
  user: z.string().optional(),
  // Accepted because they change nothing sluice does: it never truncates, and it always streams usage.
  truncation: z.literal('disabled').nullable().optional(),
  /** Fallbacks in the OpenRouter way, read by routing (src/routing/request-routing.ts), never sent upstream. */
  models: z.array(z.string()).optional(),
  include: z.array(z.string()).nullable().optional(),
  service_tier: z.string().nullable().optional(),
  stream_options: z.looseObject({}).nullable().optional(),
});

export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;
export type ResponsesInputItem = z.infer<typeof inputItem>;
