import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../errors/gateway-error.ts';
import { takeMcpTools } from './mcp-tool-entries.ts';

const fn = { type: 'function', function: { name: 'lookup' } };
const refused = (param: string) => (err: unknown) => err instanceof GatewayError && err.status === 400 && err.param === param;

describe('takeMcpTools', () => {
  it('takes the mcp entries out and keeps the client tools', () => {
    const taken = takeMcpTools(
      { model: 'm', tools: [fn, { type: 'mcp', server_label: 'calc', allowed_tools: ['add'], require_approval: 'never' }] },
      ['calc'],
    );
    assert.deepEqual(taken.body, { model: 'm', tools: [fn] });
    assert.deepEqual(taken.entries, [{ server: 'calc', allowed: ['add'], path: 'tools[1]' }]);
  });

  it('drops `tools` when only mcp entries were in it, and reads the filter object of allowed_tools', () => {
    const taken = takeMcpTools({ model: 'm', tools: [{ type: 'mcp', server_label: 'calc', allowed_tools: { tool_names: ['add'] } }] }, ['calc']);
    assert.deepEqual(taken.body, { model: 'm' });
    assert.deepEqual(taken.entries[0].allowed, ['add']);
  });

  it('leaves a body without mcp entries as it is', () => {
    const body = { model: 'm', tools: [fn] };
    assert.equal(takeMcpTools(body, ['calc']).body, body);
    assert.deepEqual(takeMcpTools('not an object', ['calc']).entries, []);
  });

  it("refuses a server that is not sluice's, a client's URL, and approvals, naming the field", () => {
    assert.throws(() => takeMcpTools({ tools: [fn, { type: 'mcp', server_label: 'github' }] }, ['calc']), refused('tools[1].server_label'));
    assert.throws(
      () => takeMcpTools({ tools: [{ type: 'mcp', server_label: 'calc', server_url: 'https://x.example' }] }, ['calc']),
      refused('tools[0].server_url'),
    );
    assert.throws(
      () => takeMcpTools({ tools: [{ type: 'mcp', server_label: 'calc', require_approval: 'always' }] }, ['calc']),
      refused('tools[0].require_approval'),
    );
    assert.throws(() => takeMcpTools({ tools: [{ type: 'mcp' }] }, ['calc']), refused('tools[0].server_label'));
  });
});
