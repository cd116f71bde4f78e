import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { prefixNames } from './prefixed-names.ts';

const VALID = /^[A-Za-z0-9_.-]{1,128}$/;

describe('prefixNames', () => {
  it('prefixes valid names with the server and two underscores, unchanged otherwise', () => {
    const names = prefixNames('github', ['create_issue', 'list.repos', 'a-b']);
    assert.deepEqual([...names.values()], ['github__create_issue', 'github__list.repos', 'github__a-b']);
  });

  it('replaces invalid characters and adds a digest, so that two names that differ stay apart', () => {
    const names = prefixNames('fs', ['read file', 'read/file', 'read_file']);
    const values = [...names.values()];
    assert.equal(new Set(values).size, 3);
    for (const value of values) assert.match(value, VALID);
    assert.equal(names.get('read_file'), 'fs__read_file');
    assert.match(names.get('read file') ?? '', /^fs__read_file-[0-9a-f]{8}$/);
  });

  it('cuts long names to 128 characters, each still unique and stable', () => {
    const long = ['x'.repeat(200), `${'x'.repeat(199)}y`];
    const first = prefixNames('s', long);
    const again = prefixNames('s', long);
    for (const name of long) {
      const prefixed = first.get(name) ?? '';
      assert.match(prefixed, VALID);
      assert.equal(prefixed, again.get(name));
    }
    assert.notEqual(first.get(long[0]), first.get(long[1]));
  });
});
