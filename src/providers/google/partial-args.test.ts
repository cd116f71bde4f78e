import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PartialArgsAssembler, parseJsonPath } from './partial-args.ts';

describe('parseJsonPath', () => {
  it('reads the RFC 9535 segments Vertex uses', () => {
    assert.deepEqual(parseJsonPath('$.location'), ['location']);
    assert.deepEqual(parseJsonPath('$.foo.bar[0].data'), ['foo', 'bar', 0, 'data']);
    assert.deepEqual(parseJsonPath('$[\'a b\'][12]["c\\"d"]'), ['a b', 12, 'c"d']);
    assert.deepEqual(parseJsonPath("$['it\\'s\\u00e9']"), ["it'sé"]);
    assert.deepEqual(parseJsonPath('$'), []);
  });

  it('refuses anything else', () => {
    for (const path of ['location', '$.', '$[01]', '$[-1]', "$['open", '$.a..b', '$[*]', "$['x'"]) {
      assert.equal(parseJsonPath(path), undefined, path);
    }
  });
});

describe('PartialArgsAssembler', () => {
  it('joins continued strings and places typed values at their paths', () => {
    const a = new PartialArgsAssembler();
    const fragments = [
      { jsonPath: '$.city', stringValue: 'San ', willContinue: true },
      { jsonPath: '$.city', stringValue: 'Francisco', willContinue: true },
      { jsonPath: '$.city', stringValue: '' },
      { jsonPath: '$.days', numberValue: 3 },
      { jsonPath: '$.opts.metric', boolValue: false },
      { jsonPath: '$.opts.lang', nullValue: 'NULL_VALUE' },
      { jsonPath: '$.stops[0].name', stringValue: 'A' },
      { jsonPath: '$.stops[1].name', stringValue: 'B' },
      { jsonPath: '$.city2', stringValue: 'x' },
      { jsonPath: '$.city2', stringValue: 'y' },
    ];
    for (const f of fragments) assert.equal(a.add(f), undefined);
    assert.equal(a.json(), '{"city":"San Francisco","days":3,"opts":{"metric":false,"lang":null},"stops":[{"name":"A"},{"name":"B"}],"city2":"y"}');
  });

  it('nothing added is an empty object; `__proto__` is an ordinary key', () => {
    assert.equal(new PartialArgsAssembler().json(), '{}');
    const a = new PartialArgsAssembler();
    assert.equal(a.add({ jsonPath: "$['__proto__'].x", stringValue: 'y' }), undefined);
    assert.equal(a.json(), '{"__proto__":{"x":"y"}}');
    assert.equal(({} as Record<string, unknown>).x, undefined);
  });

  it('reports a path it cannot place', () => {
    const a = new PartialArgsAssembler();
    assert.equal(a.add({ jsonPath: '$', stringValue: 'x' }), 'unsupported function-call argument path "$"');
    assert.equal(a.add({ jsonPath: '$.list[0]', stringValue: 'x' }), undefined);
    assert.equal(a.add({ jsonPath: '$.list.name', stringValue: 'x' }), 'function-call argument path "$.list.name" conflicts with an earlier value');
    assert.equal(a.add({ jsonPath: '$[0]', stringValue: 'x' }), 'function-call argument path "$[0]" conflicts with an earlier value');
  });
});
