import { EventStreamCodec } from '@smithy/eventstream-codec';
import fc from 'fast-check';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { anthropicStreamBody } from '../test/helpers/anthropic-fixtures.ts';
import { bedrockBody, reencodedBody } from '../test/helpers/bedrock-fixtures.ts';
import { listFixtures, openAIStreamBody } from '../test/helpers/fixtures.ts';
import { geminiStreamBody } from '../test/helpers/gemini-fixtures.ts';
import { openAICompatibleRecordings } from '../test/helpers/openai-recordings.ts';

/**
 * A recorded upstream body (test/fixtures) cut into its frames, so a mutation can replace one
 * frame's JSON payload and keep every other byte as recorded.
 */
export interface Recording {
  name: string;
  /** The frames in order (SSE blocks with their blank line, or whole eventstream messages): exact bytes. */
  blocks: Buffer[];
  /** Each block's JSON payload as text, or null where it has none (a comment, `[DONE]`). */
  payloads: (string | null)[];
  /** Block `i` with its payload replaced by this JSON text, framed the way the recording frames it. */
  withPayload(i: number, json: string): Buffer;
  /** A counterexample names the recording instead of printing its bytes. */
  [fc.toStringMethod](): string;
}

/** An SSE body: blocks end at a blank line (LF or CRLF); the payload is the block's single `data:` line. */
function sseRecording(name: string, body: Buffer): Recording {
  const texts = body.toString('utf8').split(/(?<=\n\r?\n)/);
  const dataLine = (block: string) => {
    const lines = block.split(/\r?\n/).filter((l) => l.startsWith('data:'));
    return lines.length === 1 ? lines[0] : null;
  };
  return {
    name,
    [fc.toStringMethod]: () => name,
    blocks: texts.map((t) => Buffer.from(t)),
    payloads: texts.map((t) => {
      const line = dataLine(t);
      const value = line?.slice(5).trimStart();
      return value && value !== '[DONE]' ? value : null;
    }),
    withPayload(i, json) {
      const line = dataLine(texts[i]);
      return Buffer.from(line ? texts[i].replace(line, `data: ${json}`) : texts[i]);
    },
  };
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** An eventstream body: each message is re-encoded around its new payload, so both CRCs stay valid. */
function eventStreamRecording(name: string, body: Buffer): Recording {
  const blocks: Buffer[] = [];
  for (let offset = 0; offset < body.length;) {
    const length = body.readUInt32BE(offset);
    blocks.push(body.subarray(offset, offset + length));
    offset += length;
  }
  const messages = blocks.map((b) => codec.decode(b));
  return {
    name,
    [fc.toStringMethod]: () => name,
    blocks,
    payloads: messages.map((m) => (m.body.length > 0 ? toUtf8(m.body) : null)),
    withPayload(i, json) {
      return Buffer.from(codec.encode({ headers: messages[i].headers, body: fromUtf8(json) }));
    },
  };
}

export const openAIRecordings: Recording[] = openAICompatibleRecordings.map((n) => sseRecording(n, openAIStreamBody(n)));

export const anthropicRecordings: Recording[] = listFixtures('anthropic', ['.sse', '.jsonl']).map((n) =>
  sseRecording(n, anthropicStreamBody(n)),
);

export const geminiRecordings: Recording[] = listFixtures('gemini', ['.sse', '.jsonl']).map((n) =>
  sseRecording(n, geminiStreamBody(n)),
);

export const bedrockRecordings: Recording[] = [
  ...listFixtures('bedrock', ['.b64']).map((n) => eventStreamRecording(n, bedrockBody(n))),
  eventStreamRecording('bedrock/converse-reasoning-decoded.jsonl', reencodedBody('bedrock/converse-reasoning-decoded.jsonl')),
];

/** Every SSE recording of every provider: the raw material of the framer's fuzz. */
export const sseRecordings: Recording[] = [...openAIRecordings, ...anthropicRecordings, ...geminiRecordings];
