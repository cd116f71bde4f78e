import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { closestMatch, editDistance } from './edit-distance.ts';

describe('editDistance', () => {
  it('counts insertions, deletions, substitutions and adjacent transpositions', () => {
    assert.equal(editDistance('', ''), 0);
    assert.equal(editDistance('port', 'port'), 0);
    assert.equal(editDistance('prot', 'port'), 1);
    assert.equal(editDistance('ca', 'abc'), 3);
    assert.equal(editDistance('kitten', 'sitting'), 3);
    assert.equal(editDistance('', 'abc'), 3);
    assert.equal(editDistance('api_keys', 'api_key'), 1);
  });
});

describe('closestMatch', () => {
  const keys = ['host', 'port', 'body_limit_bytes', 'drain_timeout_s'];
  it('suggests a key within about a third of its length, case-insensitively', () => {
    assert.equal(closestMatch('prot', keys), 'port');
    assert.equal(closestMatch('Port', keys), 'port');
    assert.equal(closestMatch('body_limit_byte', keys), 'body_limit_bytes');
    assert.equal(closestMatch('drain_timeout', keys), 'drain_timeout_s');
  });
  it('else suggests a key the word begins', () => {
    assert.equal(closestMatch('body_limit', keys), 'body_limit_bytes');
    assert.equal(closestMatch('bod', keys), undefined);
  });
  it('suggests nothing for a word that resembles no key', () => {
    assert.equal(closestMatch('database', keys), undefined);
    assert.equal(closestMatch('x', []), undefined);
  });
});
