import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import { scenarios } from './scenarios.ts';

const events = (request: CanonicalRequest): CanonicalEvent[] => scenarios.tools.script(request).flatMap((s) => s.events);
const text = (all: CanonicalEvent[]) => all.map((e) => (e.type === 'text' ? e.text : '')).join('');
const finishReason = (all: CanonicalEvent[]) => all.find((e) => e.type === 'finish')?.reason;

const tool = { type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object' } } };
const call = { id: 'call_mock_0', type: 'function' as const, function: { name: 'lookup', arguments: '{}' } };

describe('mock/tools', () => {
  it('calls the first function tool when the turn has no tool result yet', () => {
    const all = events({ model: 'mock/tools', tools: [tool], messages: [{ role: 'user', content: 'weather?' }] });
    assert.equal(finishReason(all), 'tool_calls');
    assert.deepEqual(
      all.find((e) => e.type === 'tool-call-start'),
      { type: 'tool-call-start', choice: 0, index: 0, id: 'call_mock_0', name: 'lookup' },
    );
  });

  it('answers with text once the conversation carries the tool result, so an agent loop ends', () => {
    const all = events({
      model: 'mock/tools',
      tools: [tool],
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: 'call_mock_0', content: [{ type: 'text', text: '18 C, sunny' }] },
      ],
    });
    assert.equal(finishReason(all), 'stop');
    assert.equal(text(all), 'The tool returned: 18 C, sunny');
    assert.equal(
      all.some((e) => e.type === 'tool-call-start'),
      false,
    );
  });

  it('calls again when the user asks again after an answered call', () => {
    const all = events({
      model: 'mock/tools',
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: 'call_mock_0', content: 'sunny' },
        { role: 'assistant', content: 'The tool returned: sunny' },
        { role: 'user', content: 'and tomorrow?' },
      ],
    });
    assert.equal(finishReason(all), 'tool_calls');
  });
});
