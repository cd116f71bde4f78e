import { z } from 'zod';
import { choiceIndex, joinIndex, label, str, tokenCount } from '../upstream-schema.ts';

/**
 * The parts of a chat.completion.chunk (or a whole chat.completion) that sluice reads, with each
 * vendor's variants; everything else a vendor adds is ignored (lenient upstream).
 */

const byte = z.number().int().min(0).max(255);
const topLogprob = z.object({ token: z.string(), logprob: z.number(), bytes: z.array(byte).nullable().default(null) });
/** Some servers leave out `bytes` or `top_logprobs`; the client still gets OpenAI's full shape. */
const tokenLogprob = topLogprob.extend({
  top_logprobs: z
    .array(topLogprob)
    .nullish()
    .transform((v) => v ?? []),
});

const textPart = z.object({ type: str, text: str });
/** Mistral: `[{type:"thinking", thinking:[{type:"text", text}]}, {type:"text", text}]`. */
const contentPart = textPart.extend({ thinking: z.union([z.string(), z.array(textPart)]).nullish() });

const toolCall = z.object({
  index: joinIndex.nullish(),
  id: str,
  function: z.object({ name: str, arguments: str }).nullish(),
});

/** OpenAI's annotation shape; OpenRouter adds the cited `content`. */
const annotation = z.object({
  type: str,
  url_citation: z
    .object({ url: str, title: str, start_index: joinIndex.nullish(), end_index: joinIndex.nullish(), content: str })
    .nullish(),
});

const delta = z.object({
  content: z.union([z.string(), z.array(contentPart)]).nullish(),
  reasoning_content: str,
  reasoning: str,
  refusal: str,
  tool_calls: z.array(toolCall).nullish(),
  annotations: z.array(annotation).nullish(),
});

const choice = z.object({
  index: choiceIndex.nullish(),
  delta: delta.nullish(),
  /** Non-streaming responses carry `message` instead of `delta`. */
  message: delta.nullish(),
  finish_reason: str,
  logprobs: z.object({ content: z.array(tokenLogprob).nullish(), refusal: z.array(tokenLogprob).nullish() }).nullish(),
  /** Azure OpenAI's content filter verdicts on this choice, passed on as sent. */
  content_filter_results: z.record(z.string(), z.unknown()).nullish(),
});

/** The usage fields the OpenAI family sends, with each vendor's variants. */
const usageSchema = z.object({
  prompt_tokens: tokenCount,
  completion_tokens: tokenCount,
  total_tokens: tokenCount,
  prompt_tokens_details: z
    .object({ cached_tokens: tokenCount, cache_write_tokens: tokenCount, audio_tokens: tokenCount })
    .nullish(),
  completion_tokens_details: z
    .object({
      reasoning_tokens: tokenCount,
      audio_tokens: tokenCount,
      accepted_prediction_tokens: tokenCount,
      rejected_prediction_tokens: tokenCount,
    })
    .nullish(),
  /** DeepSeek's cache accounting. */
  prompt_cache_hit_tokens: tokenCount,
  /** Together (through the Hugging Face router) reports it at the top level. */
  cached_tokens: tokenCount,
});

export const chunkSchema = z.object({
  id: label,
  model: label,
  system_fingerprint: label,
  service_tier: label,
  choices: z.array(choice).nullish(),
  usage: usageSchema.nullish(),
  /** Groq reports usage here. */
  x_groq: z.object({ usage: usageSchema.nullish() }).nullish(),
  /** Azure OpenAI's content filter verdicts on the prompt, passed on as sent. */
  prompt_filter_results: z.array(z.unknown()).nullish(),
  /** OpenRouter's error object inside a chunk; read by stream-error.ts. */
  error: z.unknown().optional(),
});

export type ChunkChoice = z.infer<typeof choice>;
export type ChunkToolCall = z.infer<typeof toolCall>;
export type ChunkAnnotation = z.infer<typeof annotation>;
export type ContentPart = z.infer<typeof contentPart>;
export type Chunk = z.infer<typeof chunkSchema>;
