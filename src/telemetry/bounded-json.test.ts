import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { boundedJson } from './bounded-json.ts';

describe('boundedJson', () => {
  it('is the plain JSON when it fits', () => {
    const items = [{ role: 'user', parts: [{ type: 'text', content: 'hi' }] }];
    assert.deepEqual(boundedJson(items, 1000), { json: JSON.stringify(items), clipped: false });
  });

  it('cuts the content of the item that crosses the limit, drops the rest, and still parses', () => {
    const items = [
      { role: 'system', parts: [{ type: 'text', content: 'short' }] },
      { role: 'user', parts: [{ type: 'text', content: '"quoted" \\ and \u{1F600} '.repeat(500) }] },
      { role: 'user', parts: [{ type: 'text', content: 'after' }] },
    ];
    for (const max of [200, 1000, 5000]) {
      const { json, clipped } = boundedJson(items, max);
      assert.ok(json.length <= max, `${json.length} > ${max}`);
      assert.equal(clipped, true);
      const parsed = JSON.parse(json);
      assert.equal(parsed.length, 2);
      assert.equal(parsed[1].role, 'user', 'the shape is kept, only content is cut');
      assert.ok(items[1].parts[0].content.startsWith(parsed[1].parts[0].content.slice(0, -1)));
    }
  });

  it('leaves out an item whose shape alone does not fit', () => {
    const { json } = boundedJson([{ role: 'user', parts: [{ type: 'text', content: 'x'.repeat(100) }] }], 20);
    assert.equal(json, '[]');
  });

  it('cuts non-string content (parsed tool arguments) as its JSON text', () => {
    const items = [{ role: 'assistant', parts: [{ type: 'tool_call', name: 'f', arguments: { q: 'y'.repeat(500) } }] }];
    const parsed = JSON.parse(boundedJson(items, 120).json);
    assert.equal(typeof parsed[0].parts[0].arguments, 'string');
    assert.ok(parsed[0].parts[0].arguments.startsWith('{"q":"yyy'));
  });
});
