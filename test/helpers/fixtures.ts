import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The recorded upstream streams, kept in the repository (test/fixtures, provenance in its
 * README.md). A missing fixture is a failing test, never a skip: every read below throws.
 */
export const fixturesDir = fileURLToPath(new URL('../fixtures/', import.meta.url));

export function fixturePath(name: string): string {
  return join(fixturesDir, name);
}

export function readFixture(name: string): Buffer {
  return readFileSync(fixturePath(name));
}

export function listFixtures(folder: string, extensions: string[]): string[] {
  const files = readdirSync(join(fixturesDir, folder))
    .filter((f) => extensions.some((e) => f.endsWith(e)) && !f.endsWith('.request.json'))
    .sort()
    .map((f) => `${folder}/${f}`);
  if (files.length === 0) throw new Error(`no ${extensions.join('/')} recordings in test/fixtures/${folder}`);
  return files;
}

/**
 * The body an OpenAI-family server sent. `.sse` files are the exact bytes; `.jsonl` recordings
 * dropped the framing, so each payload is re-framed as `data: …` and `[DONE]` is added back.
 */
export function openAIStreamBody(name: string): Buffer {
  const raw = readFixture(name);
  if (name.endsWith('.sse')) return raw;
  const lines = raw
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  return Buffer.from(`${lines.map((l) => `data: ${l}\n\n`).join('')}data: [DONE]\n\n`);
}

/** The JSON payloads of an OpenAI-family recording, with the frame's event name. */
export function openAIPayloads(name: string): { event: string | undefined; data: string }[] {
  const text = openAIStreamBody(name).toString('utf8');
  const out: { event: string | undefined; data: string }[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length > 0) out.push({ event, data: data.join('\n') });
  }
  return out;
}
