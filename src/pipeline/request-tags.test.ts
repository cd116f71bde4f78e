import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../errors/gateway-error.ts';
import { MAX_TAGS } from '../accounting/tag-rules.ts';
import { takeTags } from './request-tags.ts';

const paramOf = (fn: () => unknown): string | null => {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    assert.equal(err.status, 400);
    return err.param;
  }
  assert.fail('no error');
};

describe('takeTags', () => {
  it('takes metadata.tags out of the body and keeps the rest of metadata', () => {
    const { body, tags } = takeTags({ model: 'm', metadata: { tags: ['team:a', 'beta'], user: 'u' } }, undefined);
    assert.deepEqual(tags, ['team:a', 'beta']);
    assert.deepEqual(body, { model: 'm', metadata: { user: 'u' } });
  });

  it('drops a metadata left empty, and adds the header tags once each', () => {
    const { body, tags } = takeTags({ model: 'm', metadata: { tags: ['a'] } }, ' b, a ,,c');
    assert.deepEqual(body, { model: 'm' });
    assert.deepEqual(tags, ['a', 'b', 'c']);
  });

  it('leaves a body without tags as it is; no tags is null', () => {
    const sent = { model: 'm', metadata: { user: 'u' } };
    const { body, tags } = takeTags(sent, undefined);
    assert.equal(body, sent);
    assert.equal(tags, null);
  });

  it('refuses bad tags with a 400 naming where they came from', () => {
    assert.equal(
      paramOf(() => takeTags({ metadata: { tags: 'a' } }, undefined)),
      'metadata.tags',
    );
    assert.equal(
      paramOf(() => takeTags({ metadata: { tags: [1] } }, undefined)),
      'metadata.tags',
    );
    assert.equal(
      paramOf(() => takeTags({ metadata: { tags: ['ok', ''] } }, undefined)),
      'metadata.tags[1]',
    );
    assert.equal(
      paramOf(() => takeTags({ metadata: { tags: ['x'.repeat(65)] } }, undefined)),
      'metadata.tags[0]',
    );
    assert.equal(
      paramOf(() => takeTags({ metadata: { tags: ['a b'] } }, undefined)),
      'metadata.tags[0]',
    );
    assert.equal(
      paramOf(() => takeTags({}, 'ok,-dash')),
      'x-sluice-tags',
    );
    const many = Array.from({ length: MAX_TAGS + 1 }, (_, i) => `t${i}`);
    assert.equal(
      paramOf(() => takeTags({ metadata: { tags: many } }, undefined)),
      'metadata.tags[10]',
    );
    assert.equal(
      paramOf(() => takeTags({ metadata: { tags: many.slice(0, MAX_TAGS) } }, 'more')),
      'x-sluice-tags',
    );
  });
});
