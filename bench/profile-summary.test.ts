import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type CpuProfile, summarizeProfile } from './profile-summary.ts';

const root = new URL('..', import.meta.url).href;
const frame = (functionName: string, url: string, lineNumber = 0) => ({ functionName, url, lineNumber });

// (root) -> streamChat (src) -> encode (src) ; streamChat -> writev (native) ; (idle) ; (garbage collector)
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)', ''), children: [2, 5, 6] },
    { id: 2, callFrame: frame('streamChat', `${root}src/pipeline/stream-chat.ts`, 30), children: [3, 4] },
    { id: 3, callFrame: frame('encode', `${root}src/protocol/openai-chat/encode-chunks.ts`, 74) },
    { id: 4, callFrame: frame('writev', '') },
    { id: 5, callFrame: frame('(idle)', '') },
    { id: 6, callFrame: frame('(garbage collector)', '') },
  ],
  // Each sample lasts until the next one: the delta at i + 1.
  samples: [3, 3, 4, 2, 5, 6, 3],
  timeDeltas: [0, 100, 100, 300, 100, 1000, 200, 100],
};

describe('summarizeProfile', () => {
  it('splits busy time into self time, sluice inclusive time and areas, idle left out', () => {
    const s = summarizeProfile(profile, { top: 10, requests: 2 });
    assert.equal(s.busyMs, 0.9);
    assert.deepEqual(
      s.self.map((r) => [r.name, r.where, r.ms]),
      [
        ['encode', 'src/protocol/openai-chat/encode-chunks.ts:75', 0.3],
        ['writev', '', 0.3],
        ['(garbage collector)', '', 0.2],
        ['streamChat', 'src/pipeline/stream-chat.ts:31', 0.1],
      ],
    );
    assert.deepEqual(
      s.inclusive.map((r) => [r.name, r.ms]),
      [
        ['streamChat', 0.7],
        ['encode', 0.3],
      ],
    );
    assert.deepEqual(
      s.areas.map((a) => [a.area, a.ms]),
      [
        ['sluice src/', 0.4],
        ['(native)', 0.3],
        ['(garbage collector)', 0.2],
      ],
    );
    assert.equal(s.requests, 2);
  });
});
