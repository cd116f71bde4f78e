import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createSseFramer, type SseFrame } from '../src/protocol/sse/parse-upstream.ts';
import { bodyCase, buildBody, splitBody } from './mutate-body.ts';
import { sseRecordings } from './recordings.ts';
import { type FuzzTarget, fuzzTarget } from './run-targets.ts';

type Seen = { frame: SseFrame } | { invalid: true };

/** What the framer reports for a body in these reads (an invalid line without its detail). */
function frame(pieces: readonly Uint8Array[], maxBufferSize: number | undefined): Seen[] {
  const seen: Seen[] = [];
  const framer = createSseFramer({
    maxBufferSize,
    onFrame: (f) => seen.push({ frame: f }),
    onInvalid: (detail) => {
      assert.ok(detail.length > 0, 'an invalid line is reported with a detail');
      seen.push({ invalid: true });
    },
  });
  for (const piece of pieces) framer.push(piece);
  framer.end();
  return seen;
}

export const sseFramerTargets: FuzzTarget[] = [
  fuzzTarget({
    name: 'sse-framer',
    family: 'sse framer',
    what: `protocol/sse/parse-upstream over all ${sseRecordings.length} SSE recordings, mutated and split at random reads, with the default 4 MiB limit and with limits of 8-512 characters: no throw (end() included), at most one invalid report and nothing after it, event names without line breaks, and the same frames however the body is split (under the default limit)`,
    input: () =>
      fc.record({
        body: bodyCase(sseRecordings),
        limit: fc.option(fc.integer({ min: 8, max: 512 }), { nil: undefined, freq: 2 }),
      }),
    assert({ body: c, limit }) {
      const bytes = buildBody(c);
      const split = frame(splitBody(bytes, c.splits), limit);
      const invalid = split.findIndex((s) => 'invalid' in s);
      assert.ok(invalid === -1 || invalid === split.length - 1, 'nothing after an invalid line');
      for (const s of split) if ('frame' in s) assert.ok(!/[\r\n]/.test(s.frame.event ?? ''), 'an event name with a line break');
      // A small limit trips on what is buffered, and only a line cut by a read is buffered: which
      // bodies it refuses depends on the reads by design (a bound on memory, not a grammar rule).
      if (limit === undefined) assert.deepEqual(split, frame([bytes], limit), 'the frames depend on how the body was split');
    },
  }),
];
