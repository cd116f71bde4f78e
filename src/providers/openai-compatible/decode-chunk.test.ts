import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import { type Chunk, ChunkDecoder } from './decode-chunk.ts';

function decode(chunks: Chunk[]): CanonicalEvent[] {
  const out: CanonicalEvent[] = [];
  const decoder = new ChunkDecoder({ provider: 'test', splitThinkTags: false });
  for (const c of chunks) decoder.decode(c, out);
  decoder.end(out);
  return out.filter((e) => e.type !== 'start');
}

const delta = (d: Record<string, unknown>, finish: string | null = null): Chunk => ({
  choices: [{ index: 0, delta: d, finish_reason: finish }],
});

// No recording has these shapes (the recorded Mistral call carries an index), so they are
// written out here from the providers' documented behaviour.
describe('tool calls the recordings do not show', () => {
  it('joins calls without `index` by id, and id-less continuations to the last call (Mistral style)', () => {
    assert.deepEqual(
      decode([
        delta({ tool_calls: [{ id: 'a1', function: { name: 'weather', arguments: '{"city":' } }] }),
        delta({ tool_calls: [{ function: { arguments: '"Paris"}' } }] }),
        delta({ tool_calls: [{ id: 'b2', function: { name: 'time', arguments: '{}' } }] }),
        delta({}, 'tool_calls'),
      ]),
      [
        { type: 'tool-call-start', choice: 0, index: 0, id: 'a1', name: 'weather' },
        { type: 'tool-call-delta', choice: 0, index: 0, arguments: '{"city":' },
        { type: 'tool-call-delta', choice: 0, index: 0, arguments: '"Paris"}' },
        { type: 'tool-call-start', choice: 0, index: 1, id: 'b2', name: 'time' },
        { type: 'tool-call-delta', choice: 0, index: 1, arguments: '{}' },
        { type: 'finish', choice: 0, reason: 'tool_calls', rawReason: 'tool_calls' },
      ],
    );
  });

  it('splits parallel calls an upstream sent all with index 0 but distinct ids', () => {
    const events = decode([
      delta({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'f', arguments: '{"n":1}' } }] }),
      delta({ tool_calls: [{ index: 0, id: 'c2', function: { name: 'f', arguments: '{"n":2}' } }] }),
      delta({}, 'tool_calls'),
    ]);
    assert.deepEqual(
      events.filter((e) => e.type === 'tool-call-start').map((e) => [e.index, e.id]),
      [
        [0, 'c1'],
        [1, 'c2'],
      ],
    );
  });

  it('reports tool_calls when a server finishes a tool-calling turn with "stop"', () => {
    const events = decode([delta({ tool_calls: [{ index: 0, id: 'x', function: { name: 'f', arguments: '{}' } }] }), delta({}, 'stop')]);
    assert.deepEqual(events.at(-1), { type: 'finish', choice: 0, reason: 'tool_calls', rawReason: 'stop' });
  });

  it('makes an id only when the upstream sent none', () => {
    const [start] = decode([delta({ tool_calls: [{ index: 0, function: { name: 'f', arguments: '{}' } }] })]);
    assert.equal(start.type, 'tool-call-start');
    assert.match((start as { id: string }).id, /^call_[\w-]{16}$/);
  });
});
