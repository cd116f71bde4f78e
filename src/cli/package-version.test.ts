import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import { packageVersion } from './package-version.ts';

const ours = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

describe('packageVersion', () => {
  it("reads sluice's package.json above this module", () => {
    assert.equal(packageVersion(), ours.version);
  });

  it('finds it from deeper folders too (a build in dist/), skipping package.json files of other packages', () => {
    const root = mkdtempSync(join(tmpdir(), 'sluice-version-'));
    try {
      writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'sluice', version: '9.8.7' }));
      mkdirSync(join(root, 'dist', 'cli'), { recursive: true });
      writeFileSync(join(root, 'dist', 'package.json'), JSON.stringify({ type: 'module' }));
      assert.equal(packageVersion(pathToFileURL(join(root, 'dist', 'cli', 'main.js')).href), '9.8.7');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
