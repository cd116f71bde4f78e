import { readFixture } from './fixtures.ts';

/**
 * The body Anthropic sent. `.sse` files are the exact bytes; `.jsonl` recordings dropped the
 * framing, so each payload is re-framed the way Anthropic frames it: `event: <type>` + `data:`.
 */
export function anthropicStreamBody(name: string): Buffer {
  const raw = readFixture(name);
  if (name.endsWith('.sse')) return raw;
  const lines = raw
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  return Buffer.from(lines.map((l) => `event: ${(JSON.parse(l) as { type: string }).type}\ndata: ${l}\n\n`).join(''));
}

/** The JSON payloads of a recording, in order: the tests' independent view of what was sent. */
export function anthropicPayloads(name: string): Record<string, any>[] {
  return anthropicStreamBody(name)
    .toString('utf8')
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => JSON.parse(line.slice(5)));
}
