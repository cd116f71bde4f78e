import assert from 'node:assert/strict';
import { it } from 'node:test';
import { isTagList, MAX_TAGS } from './tag-rules.ts';

it('isTagList takes short distinct tags only', () => {
  assert.equal(isTagList(['a', 'team:x', 'env=prod', 'v1.2', 'a@b/c+d-e_f']), true);
  assert.equal(isTagList([]), true);
  assert.equal(isTagList(['a', 'a']), false);
  assert.equal(isTagList(['']), false);
  assert.equal(isTagList(['x'.repeat(65)]), false);
  assert.equal(isTagList(['_lead']), false);
  assert.equal(isTagList(Array.from({ length: MAX_TAGS + 1 }, (_, i) => `t${i}`)), false);
  assert.equal(isTagList('a'), false);
  assert.equal(isTagList([1]), false);
});
