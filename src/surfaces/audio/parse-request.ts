import { errors } from '../../errors/catalog.ts';
import { FormFields } from '../../protocol/form-fields.ts';
import type { MultipartBody } from '../../protocol/http/read-multipart-body.ts';
import { schemaError } from '../../protocol/schema-errors.ts';
import { speechSchema, TRANSCRIPTION_FORMATS, TRANSLATION_FORMATS } from './request-schema.ts';

/** A transcription or translation as sluice reads it; `form` is what is relayed (without `model`). */
export interface TranscriptionRequest {
  model: string;
  /** The text that guides the model (`prompt`): the request's only input text. */
  prompt: string;
  stream: boolean;
  form: MultipartBody;
}

/**
 * A POST /v1/audio/transcriptions or /translations form: `file` (the audio) and `model` required,
 * the format among the API's, `stream` a boolean (transcriptions only: OpenAI's translations do
 * not stream); a 400 naming the first offending field.
 */
export function parseTranscription(fields: MultipartBody, kind: 'transcriptions' | 'translations'): TranscriptionRequest {
  const form = new FormFields(fields);
  const model = form.text('model', true);
  form.files(['file'], true);
  form.oneOf('response_format', kind === 'transcriptions' ? TRANSCRIPTION_FORMATS : TRANSLATION_FORMATS);
  const stream = form.boolean('stream') ?? false;
  if (stream && kind === 'translations') {
    throw errors.invalidRequest('stream: translations are not streamed (only transcriptions are).', 'stream');
  }
  return { model, prompt: form.text('prompt') ?? '', stream, form: form.withoutModel() };
}

/** A POST /v1/audio/speech body as sluice reads it; `json` is what is relayed (without `model`). */
export interface SpeechRequest {
  model: string;
  input: string;
  /** `stream_format: "sse"`: the audio as SSE events, with the usage at their end. */
  sse: boolean;
  json: Record<string, unknown>;
}

/** A POST /v1/audio/speech body; a 400 naming the first offending field. */
export function parseSpeech(body: unknown): SpeechRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw errors.invalidRequest('The request body must be a JSON object.');
  }
  const result = speechSchema.safeParse(body);
  if (!result.success) throw schemaError(result.error);
  const { model, ...json } = result.data;
  return { model, input: json.input, sse: json.stream_format === 'sse', json };
}
