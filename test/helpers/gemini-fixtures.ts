import { readFixture } from './fixtures.ts';

/**
 * The body Gemini sent. `.sse` files are the exact bytes (CRLF framing); `.jsonl` recordings
 * dropped the framing, so each payload is re-framed the way Gemini frames it: `data: <json>`
 * and a blank line, CRLF, no `[DONE]`.
 */
export function geminiStreamBody(name: string): Buffer {
  const raw = readFixture(name);
  if (name.endsWith('.sse')) return raw;
  const lines = raw
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  return Buffer.from(lines.map((l) => `data: ${l}\r\n\r\n`).join(''));
}

/** The JSON payloads of a recording, in order: the tests' independent view of what was sent. */
export function geminiPayloads(name: string): Record<string, any>[] {
  return geminiStreamBody(name)
    .toString('utf8')
    .split('\r\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => JSON.parse(line.slice(5)));
}

/**
 * The non-stream answer equivalent to a recording, as `generateContent` returns it: each
 * candidate's parts in order, its last finishReason, the last usageMetadata.
 */
export function geminiResponseOf(name: string): Record<string, any> {
  const payloads = geminiPayloads(name);
  const candidates: Record<string, any>[] = [];
  let usageMetadata: unknown;
  for (const p of payloads) {
    for (const [position, c] of (p.candidates ?? []).entries()) {
      const i = c.index ?? position;
      candidates[i] ??= { index: i, content: { role: 'model', parts: [] } };
      candidates[i].content.parts.push(...(c.content?.parts ?? []));
      if (c.finishReason) candidates[i].finishReason = c.finishReason;
    }
    usageMetadata = p.usageMetadata ?? usageMetadata;
  }
  return { candidates, usageMetadata, modelVersion: payloads[0].modelVersion, responseId: payloads[0].responseId };
}
