import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalInput, responsesInput, responsesItems } from './genai-messages.ts';
import { OutputTranscript } from './output-transcript.ts';

describe('canonicalInput', () => {
  const request = {
    model: 'm',
    messages: [
      { role: 'system' as const, content: 'Be brief.' },
      {
        role: 'user' as const,
        content: [
          { type: 'text' as const, text: 'What is this?' },
          { type: 'image_url' as const, image_url: { url: 'data:image/png;base64,AAAA' } },
          { type: 'image_url' as const, image_url: { url: 'https://example.com/a.png' } },
        ],
      },
      {
        role: 'assistant' as const,
        content: null,
        tool_calls: [{ id: 'c1', type: 'function' as const, function: { name: 'look', arguments: '{"at":1}' } }],
      },
      { role: 'tool' as const, tool_call_id: 'c1', content: 'a cat' },
    ],
  };

  it('keeps chat system messages in the conversation, with typed parts', () => {
    assert.deepEqual(canonicalInput(request, 'chat'), {
      system: [],
      messages: [
        { role: 'system', parts: [{ type: 'text', content: 'Be brief.' }] },
        {
          role: 'user',
          parts: [
            { type: 'text', content: 'What is this?' },
            { type: 'blob', modality: 'image', mime_type: 'image/png', content: 'AAAA' },
            { type: 'uri', modality: 'image', uri: 'https://example.com/a.png' },
          ],
        },
        { role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'look', arguments: { at: 1 } }] },
        { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: 'a cat' }] },
      ],
    });
  });

  it('takes the leading system messages of Messages and Responses apart as instructions', () => {
    const input = canonicalInput(request, 'messages');
    assert.deepEqual(input.system, [{ type: 'text', content: 'Be brief.' }]);
    assert.equal(input.messages[0].role, 'user');
  });
});

describe('responsesInput and responsesItems', () => {
  it('reads a relayed body leniently: instructions, messages, calls, outputs, unknown items by type', () => {
    const input = responsesInput({
      instructions: 'Be terse.',
      input: [
        { role: 'developer', content: 'Use tools.' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }, { type: 'input_audio' }] },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: 'not json' },
        { type: 'web_search_call', id: 'ws_1' },
        { type: 'function_call_output', call_id: 'c1', output: 'done' },
        null,
      ],
    });
    assert.deepEqual(input, {
      system: [{ type: 'text', content: 'Be terse.' }],
      messages: [
        { role: 'system', parts: [{ type: 'text', content: 'Use tools.' }] },
        { role: 'user', parts: [{ type: 'text', content: 'hi' }, { type: 'input_audio' }] },
        { role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'f', arguments: 'not json' }, { type: 'web_search_call' }] },
        { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: 'done' }] },
      ],
    });
    assert.deepEqual(responsesInput({ input: 'plain' }), { system: [], messages: [{ role: 'user', parts: [{ type: 'text', content: 'plain' }] }] });
    assert.deepEqual(responsesItems([{ type: 'reasoning', summary: [{ text: 'a' }, { text: 'b' }] }]), [
      { role: 'assistant', parts: [{ type: 'reasoning', content: 'a\n\nb' }] },
    ]);
  });
});

describe('OutputTranscript', () => {
  it('joins the pieces of each choice, and keeps no more than its limit', () => {
    const t = new OutputTranscript(8);
    t.observe({ type: 'reasoning', choice: 0, text: 'hm' });
    t.observe({ type: 'text', choice: 0, text: 'Hel' });
    t.observe({ type: 'text', choice: 0, text: 'lo there' });
    t.observe({ type: 'text', choice: 1, text: 'lost' });
    t.observe({ type: 'finish', choice: 0, reason: 'length' });
    assert.equal(t.clipped, true);
    assert.deepEqual(t.messages('stop'), [
      {
        role: 'assistant',
        parts: [
          { type: 'reasoning', content: 'hm' },
          { type: 'text', content: 'Hello ' },
        ],
        finish_reason: 'length',
      },
      { role: 'assistant', parts: [], finish_reason: 'stop' },
    ]);
  });

  it('says no finish reason when neither the events nor the ledger know one', () => {
    const t = new OutputTranscript(100);
    t.observe({ type: 'text', choice: 0, text: 'cut' });
    assert.deepEqual(t.messages(null), [{ role: 'assistant', parts: [{ type: 'text', content: 'cut' }] }]);
  });
});
