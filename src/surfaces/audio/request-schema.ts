import { z } from 'zod';

/** OpenAI's limit on the text of one speech request, in characters. */
export const MAX_SPEECH_INPUT = 4096;

/**
 * POST /v1/audio/speech, the fields sluice reads; the others (instructions, speed, ...) are kept
 * (loose) and relayed as sent.
 */
export const speechSchema = z.looseObject({
  model: z.string().min(1),
  input: z.string().min(1).max(MAX_SPEECH_INPUT),
  voice: z.union([z.string().min(1), z.looseObject({ id: z.string().min(1) })]),
  response_format: z.enum(['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm']).optional(),
  stream_format: z.enum(['sse', 'audio']).optional(),
});

/** The transcript formats of /v1/audio/transcriptions (`diarized_json`: gpt-4o-transcribe-diarize). */
export const TRANSCRIPTION_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt', 'diarized_json'] as const;
/** /v1/audio/translations has the same but the diarized one. */
export const TRANSLATION_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;
