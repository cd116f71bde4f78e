import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { checkPayload, choiceIndex, jsonValue, label, plainObject } from './upstream-schema.ts';

describe('upstream payload checks', () => {
  const schema = z.object({ choices: z.array(z.object({ index: choiceIndex, tag: label, args: plainObject.optional() })) });

  it('names the first bad field as a path, and never echoes the value', () => {
    const checked = checkPayload(schema, { choices: [{ index: 0 }, { index: '"},{"secret' }] }, 'acme', 'chunk');
    assert.equal(checked.ok, false);
    if (checked.ok) return;
    assert.equal(checked.error.code, 'upstream_malformed_stream');
    assert.equal(checked.error.status, 502);
    assert.equal(checked.error.provider, 'acme');
    assert.match(checked.error.message, /^The acme stream could not be decoded: chunk field choices\[1\]\.index: /);
    assert.ok(!checked.error.message.includes('secret'));
  });

  it('a choice index is an integer from 0 to 127 (the chat schema allows n up to 128)', () => {
    for (const ok of [0, 1, 127]) assert.equal(choiceIndex.safeParse(ok).success, true, String(ok));
    for (const bad of [128, -1, 0.5, Number.POSITIVE_INFINITY, Number.NaN, '0', null]) {
      assert.equal(choiceIndex.safeParse(bad).success, false, String(bad));
    }
  });

  it('a label of the wrong type reads as absent; tool arguments must be an object', () => {
    const checked = checkPayload(schema, { choices: [{ index: 0, tag: { a: 1 }, args: { a: 1 } }] }, 'acme', 'chunk');
    assert.deepEqual(checked.ok && checked.value, { choices: [{ index: 0, tag: undefined, args: { a: 1 } }] });
    for (const args of ['{}', [], 1, null]) {
      assert.equal(checkPayload(schema, { choices: [{ index: 0, args }] }, 'acme', 'chunk').ok, false, JSON.stringify(args));
    }
  });

  it('regression: tool input nested past 128 levels is refused, not re-serialized into a stack overflow', () => {
    const nest = (depth: number) => JSON.parse(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`) as Record<string, unknown>;
    assert.equal(plainObject.safeParse(nest(100)).success, true);
    assert.equal(plainObject.safeParse(nest(20_000)).success, false);
    assert.equal(jsonValue.safeParse(nest(20_000)).success, false);
    for (const ok of [undefined, null, 1, 'x', [1, [2]], nest(100)]) assert.equal(jsonValue.safeParse(ok).success, true);
  });

  it('a payload that is not an object is reported as such', () => {
    const checked = checkPayload(schema, 'text', 'acme', 'event');
    assert.ok(!checked.ok && /could not be decoded: event: Invalid input: expected object/.test(checked.error.message));
  });
});
