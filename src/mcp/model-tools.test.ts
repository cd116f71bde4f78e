import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Access } from './grants.ts';
import { offerTools, type ToolSource } from './model-tools.ts';

const schema = { type: 'object', properties: { a: { type: 'number' } } } as Tool['inputSchema'];
const tools: Tool[] = [
  { name: 'calc__add', description: 'Adds', inputSchema: schema },
  { name: 'calc__secret', inputSchema: schema },
  { name: 'web__fetch', inputSchema: schema },
];
const source: ToolSource = {
  tools: (access) => tools.filter((t) => access.tool(t.name.split('__')[0], t.name)),
  tool: (prefixed) => ({ server: { name: prefixed.split('__')[0] }, name: prefixed.split('__')[1] }),
};
const only = (...names: string[]): Access => ({ tool: (_s, prefixed) => names.includes(prefixed), server: () => false });

describe('offerTools', () => {
  it("offers the named server's tools the caller may call, as function tools under their prefixed names", () => {
    const offer = offerTools(source, only('calc__add', 'web__fetch'), [{ server: 'calc', allowed: undefined, path: 'tools[0]' }]);
    assert.deepEqual(offer.functions, [{ type: 'function', function: { name: 'calc__add', description: 'Adds', parameters: schema } }]);
    assert.deepEqual(offer.listed, [{ server: 'calc', tools: [{ name: 'add', description: 'Adds', inputSchema: schema }] }]);
    assert.deepEqual([...offer.names], [['calc__add', { server: 'calc', name: 'add' }]]);
  });

  it("narrows to allowed_tools (the server's own names)", () => {
    const everything: Access = { tool: () => true, server: () => true };
    const offer = offerTools(source, everything, [{ server: 'calc', allowed: ['secret'], path: 'tools[0]' }]);
    assert.deepEqual(
      offer.functions.map((f) => f.function.name),
      ['calc__secret'],
    );
  });

  it('lists a server with nothing the caller may call as empty', () => {
    const offer = offerTools(source, only(), [{ server: 'web', allowed: undefined, path: 'tools[0]' }]);
    assert.deepEqual(offer.functions, []);
    assert.deepEqual(offer.listed, [{ server: 'web', tools: [] }]);
  });
});
