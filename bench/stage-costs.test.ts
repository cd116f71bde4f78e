import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CpuProfile } from './profile-summary.ts';
import { NODE_ROW, stageCosts, stageOfPath } from './stage-costs.ts';

const ROOT = 'file:///repo/';

/** A profile from stacks (outermost first), each sampled for the given µs. */
function profileOf(samples: [string[], number][]): CpuProfile {
  const nodes: CpuProfile['nodes'] = [{ id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: 0 }, children: [] }];
  const ids = new Map<string, number>();
  const sampleIds: number[] = [];
  for (const [stack] of samples) {
    let parent = nodes[0];
    let path = '';
    for (const frame of stack) {
      path += `>${frame}`;
      let id = ids.get(path);
      if (id === undefined) {
        id = nodes.length + 1;
        ids.set(path, id);
        const [functionName, file] = frame.split('@');
        nodes.push({ id, callFrame: { functionName, url: file ? `${ROOT}${file}` : '', lineNumber: 0 }, children: [] });
        parent.children!.push(id);
      }
      parent = nodes.find((n) => n.id === id)!;
    }
    sampleIds.push(parent.id);
  }
  // timeDeltas[i + 1] is sample i's duration (the gap to the next sample).
  return { nodes, samples: sampleIds, timeDeltas: [0, ...samples.map(([, us]) => us)] };
}

test('the most specific path decides a frame', () => {
  assert.equal(stageOfPath('src/store/ledger-journal.ts'), 'the journal');
  assert.equal(stageOfPath('node_modules/@opentelemetry/sdk-logs/build/src/LogRecord.js'), 'the analytics export');
  assert.equal(stageOfPath('node_modules/@opentelemetry/sdk-trace/build/src/Span.js'), 'traces');
  assert.equal(stageOfPath('src/store/ledger-writer.ts'), 'the ledger insert');
  assert.equal(stageOfPath('src/governance/keys/authenticate.ts'), 'authentication');
  assert.equal(stageOfPath('src/governance/admit/check-charges.ts'), 'admission (limits, budgets)');
  assert.equal(stageOfPath('src/cli/serve.ts'), 'other sluice code');
  assert.equal(stageOfPath('node_modules/zod/index.js'), undefined);
});

test('a sample is charged to the innermost stage on its stack, callees and all', () => {
  const profile = profileOf([
    // The stream loop calls the encoder, which calls a native: encoding.
    [['runStream@src/pipeline/run-stream.ts', 'encode@src/surfaces/chat/encode-stream.ts', 'stringify'], 30],
    // The SSE writer's socket write, down in Node: the SSE write.
    [['runStream@src/pipeline/run-stream.ts', 'write@src/protocol/sse/sse-writer.ts', 'writeGeneric@node:net'], 20],
    // The loop's own code.
    [['runStream@src/pipeline/run-stream.ts'], 5],
    // zod under the upstream decoder belongs to decoding, not to request parsing.
    [['decode@src/providers/openai-compatible/decode.ts', 'parse@node_modules/zod/index.js'], 7],
    // No sluice frame: Node's own work; GC and idle by V8's names.
    [['parserOnHeadersComplete@node:_http_common'], 11],
    [['(garbage collector)'], 4],
    [['(idle)'], 1000],
  ]);
  assert.deepEqual(stageCosts(profile, ROOT), [
    { stage: 'decoding the upstream stream', us: 7 },
    { stage: 'encoding for the client', us: 30 },
    { stage: 'the SSE write', us: 20 },
    { stage: 'stream loop and lifecycle', us: 5 },
    { stage: NODE_ROW, us: 11 },
    { stage: 'garbage collection', us: 4 },
  ]);
});
