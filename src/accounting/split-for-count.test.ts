import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { isSafeCut, MAX_HARD_CUT_ERROR, MAX_RUN, pieceEnd, splitLongRuns } from './split-for-count.ts';

// Text that looks like a special token is counted as text, as the worker does.
const AS_TEXT = { disallowedSpecial: new Set<string>() };
const encodings = [
  ['o200k', (s: string) => o200k(s, AS_TEXT)],
  ['cl100k', (s: string) => cl100k(s, AS_TEXT)],
] as const;

/** mulberry32: seeded, so a failure reproduces. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = (rand: () => number, atoms: readonly string[], n: number) => {
  let s = '';
  for (let i = 0; i < n; i++) s += atoms[Math.floor(rand() * atoms.length)];
  return s;
};

/** Everything the pre-tokenizers treat apart: spaces, newlines, contractions, digits, marks, scripts, emoji. */
const ATOMS = [
  ' ',
  '  ',
  '\t',
  '\n',
  '\n\n',
  '\r\n',
  'a',
  'Z',
  'Hello',
  'world',
  "'s",
  "'",
  '’',
  "n't",
  '.',
  ',',
  '...',
  '!',
  '/',
  '//',
  '-',
  '_',
  '(',
  '{',
  '"',
  ':',
  '0',
  '12',
  '345',
  '6789',
  'é',
  'e\u0301',
  '\u0300',
  '日本',
  '語',
  '，',
  '。',
  '👋',
  '🇫🇷',
  '𠀀',
  '𝐀',
  'ß',
  'Ω',
  'ǅ',
  'ʰ',
  '\u00a0',
  '\u3000',
  '<|endoftext|>',
  'ABC',
  'camelCase',
  'http://x.y/z',
  '1.5',
  ' 42',
];

const sumOver = (count: (s: string) => number, text: string, cuts: number[]) => {
  let n = 0;
  let from = 0;
  for (const cut of [...cuts, text.length]) {
    n += count(text.slice(from, cut));
    from = cut;
  }
  return n;
};

const safeCuts = (text: string) => {
  const cuts: number[] = [];
  for (let p = 1; p < text.length; p++) if (isSafeCut(text, p)) cuts.push(p);
  return cuts;
};

describe('split-for-count', () => {
  it('cutting at every safe point changes no count, o200k and cl100k (1000 random texts)', () => {
    const rand = random(7);
    for (let trial = 0; trial < 1000; trial++) {
      const text = pick(rand, ATOMS, 5 + Math.floor(rand() * 40));
      const cuts = safeCuts(text);
      for (const [name, count] of encodings) assert.equal(sumOver(count, text, cuts), count(text), `${name}: ${JSON.stringify(text)}`);
    }
  });

  it('counts real prose and code exactly: no hard cut, and 1 KiB pieces add up to the whole', () => {
    const texts = [
      readFileSync(new URL('../../test/fixtures/text/prose-sample.md', import.meta.url), 'utf8'),
      readFileSync(new URL('./accountant.ts', import.meta.url), 'utf8'),
    ];
    for (const text of texts) {
      assert.deepEqual(splitLongRuns(text), [text], 'no run longer than MAX_RUN');
      const cuts: number[] = [];
      for (let from = 0, end; from < text.length; from = end) {
        end = pieceEnd(text, from, 1024);
        assert.ok(end > from && end - from <= 1024);
        if (end < text.length) {
          assert.ok(isSafeCut(text, end), `a piece ends at a safe cut (${end})`);
          cuts.push(end);
        }
      }
      assert.ok(cuts.length >= Math.floor(text.length / 1024), `${cuts.length} pieces`);
      for (const [name, count] of encodings) assert.equal(sumOver(count, text, cuts), count(text), name);
    }
  });

  it(`cuts a run longer than ${MAX_RUN} characters, off by at most ${MAX_HARD_CUT_ERROR} tokens a cut`, () => {
    const rand = random(11);
    const kinds: [string, readonly string[]][] = [
      ['lowercase', 'abcdefghijklmnopqrstuvwxyz'.split('')],
      ['mixed case', 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'.split('')],
      ['base64', 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.split('')],
      ['digits', '0123456789'.split('')],
      ['whitespace', [' ', ' ', '\t', '\n']],
      ['punctuation', '!@#$%^&*()-=+[]{};:,.<>/?|~'.split('')],
      ['one letter', ['a']],
      ['CJK', Array.from({ length: 500 }, (_, i) => String.fromCodePoint(0x4e00 + i * 7))],
      ['emoji', ['👋', '🇫🇷', '😀', '✨']],
    ];
    for (const [kind, atoms] of kinds) {
      for (let trial = 0; trial < 4; trial++) {
        const text = pick(rand, atoms, 400 + Math.floor(rand() * 600));
        const segments = splitLongRuns(text);
        assert.equal(segments.join(''), text);
        for (const s of segments) assert.ok(s.length <= MAX_RUN || safeCuts(s).length > 0, `${kind}: a segment has no run over MAX_RUN`);
        const hardCuts = segments.length - 1;
        for (const [name, count] of encodings) {
          const diff = Math.abs(segments.reduce((n, s) => n + count(s), 0) - count(text));
          assert.ok(diff <= MAX_HARD_CUT_ERROR * hardCuts, `${kind} ${name}: off by ${diff} with ${hardCuts} hard cuts`);
        }
      }
    }
  });

  it('never cuts inside a surrogate pair', () => {
    const text = '👋'.repeat(200);
    for (let p = 1; p < text.length; p += 2) assert.equal(isSafeCut(text, p), false);
    for (const s of splitLongRuns(text)) assert.ok(!/^[\udc00-\udfff]|[\ud800-\udbff]$/.test(s), 'whole code points');
    const end = pieceEnd(`x${text}`, 0, 64);
    assert.equal(/[\ud800-\udbff]$/.test(`x${text}`.slice(0, end)), false);
  });

  it('knows where a letter run ends and where it goes on', () => {
    assert.equal(isSafeCut('hello world', 5), true);
    assert.equal(isSafeCut('hello, world', 5), true);
    assert.equal(isSafeCut("it's", 2), false, 'contraction');
    assert.equal(isSafeCut('e\u0301', 1), false, 'combining mark');
    assert.equal(isSafeCut('a  b', 2), false, 'inside a whitespace run');
    assert.equal(isSafeCut('abc.\ndef', 4), false, 'punctuation takes the newline');
    assert.equal(isSafeCut('abc\ndef', 3), true);
    assert.equal(isSafeCut('1234', 2), false, 'digit groups count from the run start');
    assert.equal(isSafeCut('中文，中文', 2), true);
    assert.equal(isSafeCut('𠀀，', 2), true, 'an astral letter before');
  });
});
