import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { headingAnchors, isExternal, markdownLinks } from '../../scripts/docs/markdown-links.ts';

// Every internal link of the docs and the README, checked without building the site (the build,
// `npm run docs:build`, fails on a dead page link too, but not on a missing #anchor, and takes longer).
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const docs = join(root, 'docs');

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') return [];
    const path = join(dir, entry.name);
    return entry.isDirectory() ? markdownFiles(path) : entry.name.endsWith('.md') ? [path] : [];
  });
}

const pages = [...markdownFiles(docs), join(root, 'README.md')];
const text = new Map(pages.map((page) => [page, readFileSync(page, 'utf8')]));
const anchors = new Map<string, Set<string>>();
const anchorsOf = (page: string) => anchors.get(page) ?? anchors.set(page, headingAnchors(text.get(page) ?? '')).get(page)!;

/** What is wrong with one link of `page`, or undefined. */
function problem(page: string, target: string): string | undefined {
  const [path, anchor] = target.split('#', 2) as [string, string | undefined];
  let file = path === '' ? page : resolve(dirname(page), decodeURI(path));
  // A link to a folder is its index page, as on the site.
  if (path.endsWith('/')) file = join(file, 'index.md');
  const inDocs = page.startsWith(docs + '/');
  if (inDocs && !file.startsWith(docs + '/')) return 'leaves docs/ (the site has only docs/: name a source file in `code`)';
  if (!existsSync(file)) return 'no such file';
  if (inDocs && !file.endsWith('.md')) return 'not a page (the site has only the pages of docs/)';
  if (anchor !== undefined && file.endsWith('.md') && !(text.has(file) ? anchorsOf(file) : headingAnchors(readFileSync(file, 'utf8'))).has(anchor)) {
    return `no heading with the anchor #${anchor}`;
  }
  return undefined;
}

describe('the links of the docs', () => {
  it('finds the pages', () => assert.ok(pages.length > 20, `${pages.length} pages`));

  for (const page of pages) {
    it(`${relative(root, page)}: every internal link reaches a page and its anchor`, () => {
      const broken = markdownLinks(text.get(page) ?? '')
        .filter(({ target }) => !isExternal(target))
        .map(({ target, line }) => ({ line, target, why: problem(page, target) }))
        .filter(({ why }) => why !== undefined)
        .map(({ line, target, why }) => `line ${line}: ${target}: ${why}`);
      assert.deepEqual(broken, []);
    });
  }
});
