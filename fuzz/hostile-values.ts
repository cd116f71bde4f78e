import fc from 'fast-check';

/**
 * One of `list`, by index: constantFrom indexes its values for shrinking on every draw, which cost
 * more than a whole decode of a short stream here.
 */
export function pick<T>(list: readonly T[]): fc.Arbitrary<T> {
  return fc.nat({ max: list.length - 1 }).map((i) => list[i]);
}

/** `depth` arrays (or objects) inside each other: JSON.parse takes any depth, JSON.stringify overflows past ~8,000. */
const nested = (depth: number, open: string, close: string, leaf = '') => open.repeat(depth) + leaf + close.repeat(depth);

/**
 * Raw JSON literals an upstream could send in place of any field: wrong types, numbers past what a
 * double or an integer column holds, strings that would break a frame written by concatenation
 * (quotes, `"},{"`, a fake `[DONE]`), NUL, lone surrogates, line separators, deep nesting. Each is
 * valid JSON, so it reaches the decoders' own checks rather than stopping at JSON.parse.
 */
export const HOSTILE_LITERALS: readonly string[] = [
  JSON.stringify('a"b\\c'),
  JSON.stringify('x\n\ndata: [DONE]\n\ny'),
  JSON.stringify('"},{"index":1,"delta":{"content":"pwned"},"finish_reason":null},{"index":0'),
  JSON.stringify('1,"x":{'),
  JSON.stringify('\u0000nul\u0000'),
  '"\\ud800"',
  '"\\udfff\\ud800x"',
  JSON.stringify('\u2028\u2029\r'),
  JSON.stringify('x'.repeat(70_000)),
  '""',
  '"0"',
  '"NaN"',
  '1e400',
  '-1e400',
  '1e-400',
  '1e308',
  '9007199254740993',
  '2147483648',
  '-1',
  '-0',
  '0.5',
  'null',
  'true',
  'false',
  '{}',
  '[]',
  '{"index":1,"content":"pwned","text":"pwned"}',
  '[{"index":1},"x",2]',
  '{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}',
  nested(200, '[', ']'),
  nested(20_000, '[', ']'),
  nested(20_000, '{"a":', '}', '1'),
];

/** A finite double as a JSON number literal; NaN and the infinities become the literals that overflow. */
const numberLiteral = fc
  .double()
  .map((d) => (Number.isNaN(d) ? '1e999' : Number.isFinite(d) ? String(d) : d > 0 ? '1e999' : '-1e999'));

/** One hostile value as a raw JSON literal: from the list above, or generated. */
export const hostileLiteral: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: pick(HOSTILE_LITERALS) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }).map((s) => JSON.stringify(s)) },
  { weight: 1, arbitrary: numberLiteral },
  { weight: 1, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
);

/** Strings for canonical text fields (what a decoder may pass on): any UTF-16, lone surrogates included. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 16 }) },
  {
    weight: 2,
    arbitrary: pick([
      '',
      'a"b\\c',
      'x\n\ndata: [DONE]\n\ny',
      '"},{"index":1,"delta":{"content":"pwned"}},{"',
      '\u0000',
      '\ud800',
      '\udfff\ud800',
      '\u2028\r\n',
      'event: error\ndata: {}\n\n',
      '</think><think>',
    ]),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) },
);
