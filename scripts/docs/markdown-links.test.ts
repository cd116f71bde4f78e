import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { headingAnchors, isExternal, markdownLinks, slugify } from './markdown-links.ts';

describe('slugify', () => {
  it('gives the anchors VitePress gives', () => {
    assert.equal(slugify('Metrics: GET /metrics'), 'metrics-get-metrics');
    assert.equal(slugify("The request's own fallbacks"), 'the-request-s-own-fallbacks');
    assert.equal(slugify('OpenAI-compatible providers (one adapter, presets as data)'), 'openai-compatible-providers-one-adapter-presets-as-data');
    assert.equal(slugify('2026 results'), '_2026-results');
  });
});

describe('headingAnchors', () => {
  it('reads headings outside code, inline code as its text, repeats numbered', () => {
    const page = [
      '# Title',
      '## Every core: `sluice serve --workers N`',
      '```sh',
      '# a shell comment, not a heading',
      '```',
      '## Notes',
      '## Notes',
    ].join('\n');
    assert.deepEqual([...headingAnchors(page)], ['title', 'every-core-sluice-serve-workers-n', 'notes', 'notes-1']);
  });
});

describe('markdownLinks', () => {
  it('finds links in prose with their line, not in code', () => {
    const page = ['See [a](./a.md#x) and [b](../b.md "title").', '`[not](a link)`', '```', '[nor](this.md)', '```'].join('\n');
    assert.deepEqual(markdownLinks(page), [
      { target: './a.md#x', line: 1 },
      { target: '../b.md', line: 1 },
    ]);
  });
});

describe('isExternal', () => {
  it('tells another site from a path', () => {
    assert.equal(isExternal('https://nodejs.org'), true);
    assert.equal(isExternal('mailto:a@b.c'), true);
    assert.equal(isExternal('./page.md'), false);
    assert.equal(isExternal('#anchor'), false);
  });
});
