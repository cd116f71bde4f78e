import assert from 'node:assert/strict';
import { createParser } from 'eventsource-parser';

/** The fields of a client frame this check reads. */
interface Chunk {
  type?: string;
  error?: Record<string, unknown>;
  choices?: { index: number; finish_reason: string | null }[];
}

export interface ClientFrame {
  event: string | undefined;
  data: string;
}

/** The body read by a real SSE client parser: any line it cannot read is a failure, not skipped. */
export function readFrames(body: string): ClientFrame[] {
  const frames: ClientFrame[] = [];
  const parser = createParser({
    onEvent: (m) => frames.push({ event: m.event, data: m.data }),
    onError: (e) => assert.fail(`the client's parser refused the stream: ${e.message}`),
  });
  parser.feed(body);
  parser.reset({ consume: true });
  return frames;
}

/**
 * The chat stream contract, whatever the events were: every data frame is JSON or the one final
 * `[DONE]`; each chunk carries at most one choice, at an integer index; a failed stream ends with
 * exactly one error frame before `[DONE]`; a finished one has exactly one finish_reason per choice
 * that started, after all of that choice's deltas.
 */
export function checkChatStream(body: string, failed: boolean, accounting: boolean): void {
  const frames = readFrames(body);
  assert.equal(frames.at(-1)?.data, '[DONE]', 'the stream ends with [DONE]');
  const chunks = frames.slice(0, -1).map((f, i) => {
    assert.notEqual(f.data, '[DONE]', `frame ${i}: [DONE] before the end`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(f.data);
    } catch {
      assert.fail(`frame ${i} is not JSON: ${f.data.slice(0, 200)}`);
    }
    assert.ok(parsed && typeof parsed === 'object' && !Array.isArray(parsed), `frame ${i} is not a JSON object`);
    return { event: f.event, json: parsed as Chunk };
  });
  const isError = (c: (typeof chunks)[number]) => (accounting ? c.json.type === 'error' : 'error' in c.json);
  const errorsAt = chunks.flatMap((c, i) => (isError(c) ? [i] : []));
  if (failed) {
    assert.deepEqual(errorsAt, [chunks.length - 1], 'exactly one error frame, right before [DONE]');
    // What the upstream itself said may follow, in its own field (errors/render.ts).
    if (!accounting)
      assert.deepEqual(
        Object.keys(chunks.at(-1)?.json.error ?? {}).filter((k) => k !== 'upstream'),
        ['message', 'type', 'code'],
      );
  } else {
    assert.deepEqual(errorsAt, [], 'no error frame in a stream that finished');
  }
  const finished = new Set<number>();
  const started = new Set<number>();
  for (const [i, { json }] of chunks.entries()) {
    if (!Array.isArray(json.choices)) continue;
    assert.ok(json.choices.length <= 1, `chunk ${i}: ${json.choices.length} choices`);
    const choice = json.choices[0];
    if (!choice) continue;
    assert.ok(Number.isInteger(choice.index) && choice.index >= 0, `chunk ${i}: choice index ${choice.index}`);
    assert.ok(!finished.has(choice.index), `chunk ${i}: choice ${choice.index} after its finish`);
    started.add(choice.index);
    if (choice.finish_reason !== null) finished.add(choice.index);
  }
  const sorted = (set: Set<number>) => [...set].sort((a, b) => a - b);
  if (!failed) assert.deepEqual(sorted(finished), sorted(started), 'every choice that started finished');
}
