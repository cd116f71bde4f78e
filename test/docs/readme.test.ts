import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { markdownLinks } from '../../scripts/docs/markdown-links.ts';

// The README stays a front page (issue 26): what sluice is, the quick start, the test command and
// a table of where to read on; everything else lives in docs/.
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('README.md', () => {
  it('is at most 300 lines', () => {
    const lines = readme.split('\n').length - 1;
    assert.ok(lines <= 300, `README.md has ${lines} lines: move the new text to its page under docs/`);
  });

  it('has the quick start and the test command', () => {
    for (const command of ['npm install', 'npm start', 'curl', 'npm test']) assert.ok(readme.includes(command), command);
  });

  it('links every section of docs/ (each top-level page and folder)', () => {
    const targets = markdownLinks(readme).map(({ target }) => target.split('#')[0]);
    const sections = readdirSync(new URL('../../docs/', import.meta.url), { withFileTypes: true })
      .filter((entry) => !entry.name.startsWith('.') && (entry.isDirectory() || entry.name.endsWith('.md')))
      .map((entry) => `docs/${entry.name}${entry.isDirectory() ? '/' : ''}`);
    const unlinked = sections.filter((section) => !targets.some((target) => target.startsWith(section)));
    assert.deepEqual(unlinked, [], 'add these to the README\'s table "Documentation"');
  });
});
