import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseChange } from './governance-change.ts';

describe('governance changes as they travel between instances', () => {
  it('keeps the changes it knows, with their fields only', () => {
    assert.deepEqual(parseChange({ kind: 'key', id: 'k1', extra: 1 }), { kind: 'key', id: 'k1' });
    assert.deepEqual(parseChange({ kind: 'endpoint', project: 'p', name: 'chat' }), { kind: 'endpoint', project: 'p', name: 'chat' });
    assert.deepEqual(parseChange({ kind: 'project', id: 'p', name: 'x' }), { kind: 'project', id: 'p' });
  });

  it('ignores anything else', () => {
    for (const value of [
      null,
      'key',
      42,
      {},
      { kind: 'key' },
      { kind: 'key', id: 7 },
      { kind: 'endpoint', project: 'p' },
      { kind: 'project', id: 7 },
      { kind: 'projects', id: 'p' },
    ])
      assert.equal(parseChange(value), undefined, JSON.stringify(value));
  });
});
