import { basename } from 'node:path';
import { listFixtures, readFixture } from './fixtures.ts';

/** Every recorded Responses API stream: OpenAI's, and xAI's and DeepSeek's own `/responses`. */
export const responsesRecordings: string[] = [
  ...listFixtures('openai-responses', ['.sse', '.jsonl']),
  ...['xai', 'deepseek'].flatMap((folder) => listFixtures(folder, ['.sse']).filter((n) => basename(n).startsWith('responses-'))),
];

/**
 * The upstream bodies a recording holds, as the server sent them (Responses servers send no
 * `[DONE]`). `.sse` files are the exact bytes. `.jsonl` recordings dropped the framing, so each
 * payload is re-framed as `event: <type>` + `data:`; and a `.jsonl` may hold several streams one
 * after the other (openai-responses/reasoning-encrypted-content.jsonl holds four): it is split at
 * each `response.created`.
 */
export function relayBodies(name: string): string[] {
  const raw = readFixture(name).toString('utf8');
  if (name.endsWith('.sse')) return [raw];
  const bodies: string[] = [];
  for (const line of raw.split('\n').filter((l) => l.trim() !== '')) {
    const { type } = JSON.parse(line) as { type: string };
    if (type === 'response.created' || bodies.length === 0) bodies.push('');
    bodies[bodies.length - 1] += `event: ${type}\ndata: ${line}\n\n`;
  }
  return bodies;
}
