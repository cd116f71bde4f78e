import { z } from 'zod';

/** OpenAI's limit on the images of one request (`n`). */
export const MAX_IMAGES = 10;

/**
 * POST /v1/images/generations, the fields sluice reads; the others (size, quality, background,
 * output_format, style, ...) are kept (loose) and relayed as sent: the upstream knows which of its
 * models takes which. `model` is required: sluice routes by it (OpenAI's own default is dall-e-2).
 */
export const imageGenerationSchema = z.looseObject({
  model: z.string().min(1),
  prompt: z.string().min(1),
  n: z.number().int().min(1).max(MAX_IMAGES).nullish(),
  stream: z.boolean().nullish(),
  partial_images: z.number().int().min(0).max(3).nullish(),
  user: z.string().optional(),
});
