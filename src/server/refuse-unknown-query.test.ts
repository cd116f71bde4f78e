import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { refuseUnknownQuery } from './refuse-unknown-query.ts';

const refusal = (query: string, known: readonly string[]) => {
  try {
    refuseUnknownQuery(new URLSearchParams(query), known);
  } catch (err) {
    const { status, param, message } = err as { status: number; param: string; message: string };
    return { status, param, message };
  }
  return undefined;
};

describe('refuseUnknownQuery', () => {
  const LOG = ['model', 'provider', 'key_id', 'project_id', 'limit'];

  it('GET /v1/requests?project=team-a silently ignored the parameter: an unknown one is a 400 naming it, with the nearest known name', () => {
    assert.deepEqual(refusal('project=team-a', LOG), {
      status: 400,
      param: 'project',
      message: 'Unknown query parameter "project" (did you mean "project_id"?): it takes model, provider, key_id, project_id, limit.',
    });
  });

  it('names every unknown parameter once; known ones, repeated or empty, pass', () => {
    assert.equal(refusal('model=a&limit=2&model=b&provider=', LOG), undefined);
    const { param, message } = refusal('modle=a&x=1&x=2', LOG) ?? {};
    assert.equal(param, 'modle');
    assert.equal(message, 'Unknown query parameters "modle" (did you mean "model"?), "x": it takes model, provider, key_id, project_id, limit.');
  });

  it('a route that takes none says so; a long or empty name is shown bounded and quoted', () => {
    assert.equal(refusal('a=1', [])?.message, 'Unknown query parameter "a": it takes none.');
    assert.equal(refusal('=1', [])?.param, '');
    assert.match(refusal(`${'n'.repeat(500)}=1`, [])?.message ?? '', /^Unknown query parameter "n{64}…": it takes none\.$/);
  });
});
