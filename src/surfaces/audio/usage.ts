import { asObject } from '../../protocol/as-object.ts';
import { normalizeTokenCounts, type Usage } from '../../protocol/canonical/usage.ts';

/**
 * The usage of a transcription or translation answer, as OpenAI reports it: `usage` of type
 * `tokens` (gpt-4o-transcribe: input tokens, the audio tokens among them, output tokens) or of type
 * `duration` (whisper-1: seconds of audio), else the `duration` of a verbose_json answer.
 * Undefined when the answer says neither (a transcript as `text`, `srt` or `vtt`).
 */
export function transcriptionUsage(answer: unknown): Usage | undefined {
  const body = asObject(answer);
  const usage = asObject(body?.usage);
  if (usage?.type === 'tokens') return tokenUsage(usage);
  const seconds = usage?.type === 'duration' ? usage.seconds : body?.duration;
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0
    ? { inputTokens: 0, outputTokens: 0, units: { audioSeconds: seconds }, source: 'provider' }
    : undefined;
}

/** The usage of a streamed transcript's end (`transcript.text.done`); undefined for any other event. */
export function transcriptEventUsage(type: string, event: Record<string, unknown>): Usage | undefined {
  return type === 'transcript.text.done' ? transcriptionUsage(event) : undefined;
}

/** The usage of a speech stream's end (`speech.audio.done`: its input and output tokens); undefined for any other event. */
export function speechEventUsage(type: string, event: Record<string, unknown>): Usage | undefined {
  const usage = type === 'speech.audio.done' ? asObject(event.usage) : undefined;
  return usage ? tokenUsage(usage) : undefined;
}

function tokenUsage(usage: Record<string, unknown>): Usage {
  const details = asObject(usage.input_token_details);
  const { counts, invalid } = normalizeTokenCounts({
    input_tokens: usage.input_tokens,
    output_tokens: usage.output_tokens,
    audio_tokens: details?.audio_tokens,
  });
  return {
    inputTokens: counts.input_tokens ?? 0,
    outputTokens: counts.output_tokens ?? 0,
    ...(counts.audio_tokens !== undefined ? { audioInputTokens: counts.audio_tokens } : {}),
    ...(invalid.length > 0 ? { invalid } : {}),
    source: 'provider',
  };
}
