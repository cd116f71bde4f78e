import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { choice, chunk, DONE, finish, role, violations } from '../../../test/helpers/check-streams.ts';

const calls = (...list: unknown[]) => chunk([choice({ tool_calls: list })]);
const start = (index: number, id: string, name: string) => ({ index, id, type: 'function', function: { name, arguments: '' } });
const args = (index: number, a: string) => ({ index, function: { arguments: a } });

describe('chat tool calls', () => {
  it('two parallel calls, each with its index, id and name first', () => {
    const stream = [role(), calls(start(0, 'call_a', 'f')), calls(args(0, '{}')), calls(start(1, 'call_b', 'g')), calls(args(1, '{}'))];
    assert.deepEqual(violations([...stream, finish('tool_calls'), DONE]), []);
  });

  it('the first delta of a call lacks its id or name', () => {
    assert.deepEqual(violations([role(), calls(args(0, '{}')), finish('tool_calls'), DONE]), ['2:chat/tool-call-first-delta']);
    const noName = { index: 0, id: 'call_a', function: { arguments: '' } };
    assert.deepEqual(violations([role(), calls(noName), finish('tool_calls'), DONE]), ['2:chat/tool-call-first-delta']);
  });

  it('two calls sharing an index, or one call at two indexes', () => {
    assert.deepEqual(violations([role(), calls(start(0, 'call_a', 'f')), calls(start(0, 'call_b', 'g')), finish('tool_calls'), DONE]), [
      '3:chat/tool-call-index',
    ]);
    assert.deepEqual(violations([role(), calls(start(0, 'call_a', 'f'), start(1, 'call_a', 'f')), finish('tool_calls'), DONE]), [
      '2:chat/tool-call-index',
    ]);
  });

  it('a tool call without an index (as Mistral sends them)', () => {
    const noIndex = { id: 'call_a', function: { name: 'f', arguments: '{}' } };
    assert.deepEqual(violations([role(), calls(noIndex), finish('tool_calls'), DONE]), ['2:chat/tool-call-index']);
  });
});
