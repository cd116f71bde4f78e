import { renderErrorBody } from '../../errors/render.ts';
import { relayMedia, relayMediaBytes, type WholeAnswer } from '../../pipeline/media-relay.ts';
import { mediaParsed } from '../../pipeline/media-request.ts';
import type { ModelOperation } from '../../pipeline/model-operation.ts';
import type { RunScope } from '../../pipeline/model-operation.ts';
import type { Usage } from '../../protocol/canonical/usage.ts';
import { formOf, type MultipartBody } from '../../protocol/http/read-multipart-body.ts';
import type { MediaCall } from '../../providers/types.ts';
import { parseSpeech, parseTranscription } from './parse-request.ts';
import { speechEventUsage, transcriptEventUsage, transcriptionUsage } from './usage.ts';

/**
 * A whole transcript's usage: what the answer reports, else its text, counted as the output (a
 * transcript as `text`, `srt` or `vtt` reports none).
 */
function transcriptUsage(answer: WholeAnswer): { usage: Usage | undefined; text?: string } {
  const usage = transcriptionUsage(answer.json);
  if (usage) return { usage };
  const text = answer.json === undefined ? answer.bytes.toString('utf8') : (answer.json as { text?: unknown }).text;
  return { usage: undefined, ...(typeof text === 'string' ? { text } : {}) };
}

/**
 * POST /v1/audio/transcriptions and /translations (multipart: the audio as `file`): relayed to
 * the target's own endpoint with the upload, a transcript streamed as it came when it asked for
 * `stream` (ledger surfaces `audio.transcriptions`, `audio.translations`).
 */
function transcriptionOperation(kind: 'transcriptions' | 'translations'): ModelOperation {
  return {
    surface: kind === 'transcriptions' ? 'audio.transcriptions' : 'audio.translations',
    renderError: renderErrorBody,
    parse(body, ctx) {
      const request = parseTranscription(body as MultipartBody, kind);
      const call: MediaCall = {
        path: `audio/${kind}`,
        body: { form: formOf(request.form) },
        accept: request.stream ? 'text/event-stream' : 'application/json',
      };
      return mediaParsed(ctx, {
        model: request.model,
        text: request.prompt,
        streamed: request.stream,
        run: (run) => relayMedia(run, call, { whole: transcriptUsage, event: transcriptEventUsage }),
      });
    },
  };
}

export const createTranscription = transcriptionOperation('transcriptions');
export const createTranslation = transcriptionOperation('translations');

/**
 * The usage of speech sent as audio bytes, which report none: its characters (tts-1's unit), and
 * its text's tokens counted by sluice (gpt-4o-mini-tts's input; its audio output is not known).
 */
async function spokenUsage(run: RunScope, input: string): Promise<Usage> {
  const inputTokens = await run.accountant.inputTokens(run.scope.signal);
  return { inputTokens, outputTokens: 0, units: { characters: characters(input) }, source: 'estimated' };
}

/**
 * POST /v1/audio/speech: the audio relayed as it arrives, never held whole, or as SSE events with
 * `stream_format: "sse"` (ledger surface `audio.speech`).
 */
export const createSpeech: ModelOperation = {
  surface: 'audio.speech',
  renderError: renderErrorBody,
  parse(body, ctx) {
    const request = parseSpeech(body);
    const call: MediaCall = {
      path: 'audio/speech',
      body: { json: request.json },
      accept: request.sse ? 'text/event-stream' : '*/*',
    };
    return mediaParsed(ctx, {
      model: request.model,
      text: request.input,
      streamed: request.sse,
      units: { characters: characters(request.input) },
      run: (run) =>
        request.sse
          ? relayMedia(run, call, { whole: () => ({ usage: undefined }), event: speechEventUsage })
          : relayMediaBytes(run, call, () => spokenUsage(run, request.input)),
    });
  },
};

/** Characters as OpenAI bills them: code points, not UTF-16 units (an emoji is one). */
function characters(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}
