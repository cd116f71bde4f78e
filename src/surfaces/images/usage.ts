import { asObject } from '../../protocol/as-object.ts';
import { type MediaUnits, normalizeTokenCounts, type Usage } from '../../protocol/canonical/usage.ts';

/**
 * The usage of an images answer: a GPT Image model's `usage` (its input and output tokens, the
 * image tokens among the input), and the images made, which a dall-e model reports no usage for
 * and is priced by. Undefined for an answer with neither.
 */
export function imagesUsage(answer: unknown): Usage | undefined {
  const body = asObject(answer);
  const images = Array.isArray(body?.data) ? body.data.length : 0;
  return usageOf(body?.usage, images > 0 ? { images } : undefined);
}

/**
 * The usage of a streamed image's end (`image_generation.completed`, `image_edit.completed`):
 * one image, and its tokens; undefined for any other event.
 */
export function imageEventUsage(type: string, event: Record<string, unknown>): Usage | undefined {
  if (type !== 'image_generation.completed' && type !== 'image_edit.completed') return undefined;
  return usageOf(event.usage, { images: 1 });
}

function usageOf(raw: unknown, units: MediaUnits | undefined): Usage | undefined {
  const usage = asObject(raw);
  const details = asObject(usage?.input_tokens_details);
  if (!usage && !units) return undefined;
  const { counts, invalid } = normalizeTokenCounts({
    input_tokens: usage?.input_tokens,
    output_tokens: usage?.output_tokens,
    image_tokens: details?.image_tokens,
  });
  return {
    inputTokens: counts.input_tokens ?? 0,
    outputTokens: counts.output_tokens ?? 0,
    ...(counts.image_tokens !== undefined ? { imageInputTokens: counts.image_tokens } : {}),
    ...(units ? { units } : {}),
    ...(invalid.length > 0 ? { invalid } : {}),
    source: 'provider',
  };
}
