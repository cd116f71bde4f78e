import assert from 'node:assert/strict';
import { test } from 'node:test';
import { escapeControls, escapeJsonLine } from './escape-controls.ts';

test('every control character becomes its JSON escape; other text is left as it is', () => {
  assert.equal(escapeControls('gpt\u001b[31m-red\n{"forged":1}\r'), 'gpt\\u001b[31m-red\\u000a{"forged":1}\\u000d');
  assert.equal(escapeControls('\u0000\u007f\u0085\u009b\u2028\u2029'), '\\u0000\\u007f\\u0085\\u009b\\u2028\\u2029');
  assert.equal(escapeControls('gpt-4o é—漢字 "quoted" \\ tab'), 'gpt-4o é—漢字 "quoted" \\ tab');
});

test('a JSON line keeps its newline and parses to the same values with DEL, C1 and U+2028 escaped', () => {
  const value = 'a\u007fb\u009b31mc\u2028d';
  const line = `${JSON.stringify({ model: value })}\n`;
  const escaped = escapeJsonLine(line);
  assert.equal(escaped, '{"model":"a\\u007fb\\u009b31mc\\u2028d"}\n');
  assert.deepEqual(JSON.parse(escaped), { model: value });
});
