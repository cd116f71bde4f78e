import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseChatRequest } from '../../surfaces/chat/parse-request.ts';
import { chatToCanonical } from '../../surfaces/chat/to-canonical.ts';
import { parseResponsesRequest } from '../../surfaces/responses/parse-request.ts';
import { responsesToCanonical } from '../../surfaces/responses/to-canonical.ts';
import { convertRequest } from './convert-request.ts';

describe('openai-compatible request conversion', () => {
  it('a chat client body comes back as it was sent: unknown fields at every level, developer, max_tokens, nulls', () => {
    const body = {
      model: 'up/m',
      stream: true,
      stream_options: { include_obfuscation: false },
      provider: { order: ['groq'], allow_fallbacks: false },
      top_k: 40,
      max_tokens: 100,
      temperature: null,
      tools: [
        { type: 'function', function: { name: 'f', parameters: { type: 'object' } } },
        { type: 'openrouter:web_search', parameters: { max_results: 3 } },
      ],
      messages: [
        { role: 'developer', content: 'Use metric.', name: 'ops' },
        { role: 'system', content: [{ type: 'text', text: 'Long rules', cache_control: { type: 'ephemeral' }, lang: 'en' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Read' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
            { type: 'file', file: { file_id: 'file_1', pages: [2] } },
          ],
          cache_control: { type: 'ephemeral' },
        },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'ok', tag: 'x' },
        { role: 'function', name: 'f', content: null },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: [] },
            { type: 'refusal', refusal: 'No', note: 1 },
          ],
        },
        { role: 'assistant', content: 'Sure: ', prefix: true },
      ],
    };
    // `model` and `stream` are the adapter's to set (the upstream's model id, its stream or complete method).
    const { model: _model, stream: _stream, ...expected } = body;
    assert.deepEqual(convertRequest(chatToCanonical(parseChatRequest(body))), expected);
  });

  it('reasoning_signature (sluice round-trip field) never goes upstream; reasoning_content does', () => {
    const canonical = chatToCanonical(
      parseChatRequest({
        model: 'up/m',
        messages: [{ role: 'assistant', content: 'Hi', reasoning_content: 'Think.', reasoning_signature: 'sig' }],
      }),
    );
    assert.deepEqual(convertRequest(canonical).messages, [{ role: 'assistant', content: 'Hi', reasoning_content: 'Think.' }]);
  });

  it('a Responses request arrives in the chat vocabulary (developer input kept as developer)', () => {
    const canonical = responsesToCanonical(
      parseResponsesRequest({
        model: 'up/m',
        instructions: 'Be brief.',
        input: [
          { role: 'developer', content: 'Use metric.' },
          { role: 'user', content: 'Hi' },
        ],
        max_output_tokens: 50,
      }),
      [],
    );
    assert.deepEqual(convertRequest(canonical), {
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: 'Use metric.' },
        { role: 'user', content: 'Hi' },
      ],
      max_completion_tokens: 50,
    });
  });
});
