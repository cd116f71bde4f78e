import { z } from 'zod';
import { joinIndex, jsonValue, str, tokenCount } from '../upstream-schema.ts';

/** Converse / ConverseStream payloads, only the fields sluice reads (the rest is ignored). */

/** Converse TokenUsage. */
const usage = z.object({
  inputTokens: tokenCount,
  outputTokens: tokenCount,
  cacheReadInputTokens: tokenCount,
  cacheWriteInputTokens: tokenCount,
});

export const blockStartSchema = z.object({
  contentBlockIndex: joinIndex.nullish(),
  start: z.object({ toolUse: z.object({ toolUseId: str, name: str }).nullish() }).nullish(),
});

export const blockDeltaSchema = z.object({
  contentBlockIndex: joinIndex.nullish(),
  delta: z
    .object({
      text: str,
      toolUse: z.object({ input: str }).nullish(),
      reasoningContent: z.object({ text: str, signature: str, redactedContent: str }).nullish(),
    })
    .nullish(),
});

export const blockStopSchema = z.object({ contentBlockIndex: joinIndex.nullish() });

export const messageStopSchema = z.object({ stopReason: str });

export const metadataSchema = z.object({ usage: usage.nullish() });

const contentBlock = z.object({
  text: str,
  toolUse: z.object({ toolUseId: str, name: str, input: jsonValue.optional() }).nullish(),
  reasoningContent: z
    .object({ reasoningText: z.object({ text: str, signature: str }).nullish(), redactedContent: str })
    .nullish(),
});

/** A whole Converse response. */
export const converseResponseSchema = z.object({
  output: z.object({ message: z.object({ content: z.array(contentBlock) }) }),
  stopReason: str,
  usage: usage.nullish(),
});
