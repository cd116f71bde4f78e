import { quote } from './read-sse.ts';
import type { Frame, Report, RuleFamily } from './types.ts';

/** The events that end an images stream's image: one per image (`n`), each carrying its usage. */
const IMAGE_DONE = new Set(['image_generation.completed', 'image_edit.completed']);
/** The events after which a transcript or speech stream sends nothing. */
const LAST = new Set(['transcript.text.done', 'speech.audio.done', 'error']);

/** What kind of media stream an event belongs to, by the prefix of its type. */
export function mediaFamily(type: string | undefined): string | undefined {
  if (type?.startsWith('image_generation.') || type?.startsWith('image_edit.')) return 'images';
  if (type?.startsWith('transcript.text.')) return 'transcript';
  if (type?.startsWith('speech.audio.')) return 'speech';
  return undefined;
}

/**
 * OpenAI's media streams (POST /v1/images/generations and /edits with `stream`, a transcription
 * with `stream`, speech with `stream_format: "sse"`): each payload names its `type`, and the
 * `event:` line, when there is one, says the same; the events are of one kind; an images stream
 * ends with an image's `completed` event, a transcript with `transcript.text.done`, speech with
 * `speech.audio.done`, any of them with an `error` event, after which nothing follows.
 */
export function mediaFrameRules(): RuleFamily {
  let family: string | undefined;
  let ended: { type: string; at: number } | null = null;
  let imageDone = false;
  return {
    frame(f: Frame, report: Report) {
      const e = f.json;
      if (!e) return;
      const type = typeof e.type === 'string' ? e.type : undefined;
      if (type === undefined) return report(f.n, 'media/event-type', 'an event without a `type`');
      if (f.event !== undefined && f.event !== type)
        report(f.n, 'media/event-type', `\`event: ${f.event}\` for a payload of type ${quote(type)}`);
      if (ended) return report(f.n, 'media/terminal', `${quote(type)} after ${ended.type} (frame ${ended.at})`);
      if (LAST.has(type)) ended = { type, at: f.n };
      if (type === 'error') return;
      const kind = mediaFamily(type);
      if (family !== undefined && kind !== family) report(f.n, 'media/event-type', `${quote(type)} in a ${family} stream`);
      family ??= kind;
      imageDone = IMAGE_DONE.has(type);
    },
    end(report: Report) {
      if (!ended && !imageDone) report(null, 'media/terminal', 'the stream ends without its final event or an error event');
    },
  };
}
