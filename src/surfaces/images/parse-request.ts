import { errors } from '../../errors/catalog.ts';
import type { MultipartBody } from '../../protocol/http/read-multipart-body.ts';
import { FormFields } from '../../protocol/form-fields.ts';
import { schemaError } from '../../protocol/schema-errors.ts';
import { imageGenerationSchema, MAX_IMAGES } from './request-schema.ts';

/** An images request as sluice reads it; `body` is what is relayed (without `model`). */
export interface ImagesRequest {
  model: string;
  prompt: string;
  /** The images asked for (OpenAI's default: 1). */
  n: number;
  stream: boolean;
  user?: string;
  body: { json: Record<string, unknown> } | { form: MultipartBody };
}

/** A POST /v1/images/generations body; a 400 naming the first offending field. */
export function parseImageGeneration(body: unknown): ImagesRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw errors.invalidRequest('The request body must be a JSON object.');
  }
  const result = imageGenerationSchema.safeParse(body);
  if (!result.success) throw schemaError(result.error);
  const { model, ...rest } = result.data;
  return {
    model,
    prompt: rest.prompt,
    n: rest.n ?? 1,
    stream: rest.stream === true,
    ...(rest.user !== undefined ? { user: rest.user } : {}),
    body: { json: rest },
  };
}

/**
 * A POST /v1/images/edits form: `image` (or `image[]`, several) and an optional `mask` as files,
 * the rest as text fields; a 400 naming the first offending field.
 */
export function parseImageEdit(fields: MultipartBody): ImagesRequest {
  const form = new FormFields(fields);
  const model = form.text('model', true);
  const prompt = form.text('prompt', true);
  form.files(['image', 'image[]'], true);
  form.files(['mask'], false);
  const n = form.integer('n', 1, MAX_IMAGES) ?? 1;
  form.integer('partial_images', 0, 3);
  const stream = form.boolean('stream') ?? false;
  const user = form.text('user');
  return { model, prompt, n, stream, ...(user !== undefined ? { user } : {}), body: { form: form.withoutModel() } };
}
