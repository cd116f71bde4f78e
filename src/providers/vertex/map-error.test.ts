import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mapVertexError } from './map-error.ts';

describe('mapVertexError', () => {
  it("reads Google's shape, naming vertex", () => {
    const err = mapVertexError('vertex', 429, {}, JSON.stringify({ error: { code: 429, message: 'Quota exceeded.', status: 'RESOURCE_EXHAUSTED' } }));
    assert.equal(err.status, 429);
    assert.equal(err.provider, 'vertex');
    assert.equal(err.message, 'Quota exceeded.');
  });

  it("reads Claude's Anthropic shape, its type kept", () => {
    const err = mapVertexError('vertex', 529, {}, JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
    assert.equal(err.status, 503);
    assert.equal(err.provider, 'vertex');
    assert.equal(err.upstreamType, 'overloaded_error');
  });
});
