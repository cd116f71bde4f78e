import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import { parseChatRequest } from './parse-request.ts';
import { chatToCanonical } from './to-canonical.ts';

/** The client's body through the door (schema) and into the canonical request. */
const convert = (body: Record<string, unknown>) => chatToCanonical(parseChatRequest({ model: 'up/m', ...body }));
const hi = [{ role: 'user', content: 'hi' }];

describe('chatToCanonical', () => {
  it('the modelled fields as sent, nulls included; stream stays with the surface, stream_options rides in extra', () => {
    const tools = [
      { type: 'function', function: { name: 'f', description: 'F', parameters: { type: 'object' }, strict: true } },
      { type: 'openrouter:web_search', parameters: { max_results: 3 } },
    ];
    const response_format = { type: 'json_schema', json_schema: { name: 'a', schema: { type: 'object' }, strict: null } };
    assert.deepEqual(
      convert({
        messages: hi,
        stream: true,
        stream_options: { include_usage: false, include_obfuscation: false },
        tools,
        tool_choice: { type: 'function', function: { name: 'f' } },
        parallel_tool_calls: false,
        response_format,
        reasoning_effort: 'low',
        max_tokens: 10,
        max_completion_tokens: null,
        temperature: 0.5,
        top_p: null,
        n: 1,
        stop: ['x'],
        presence_penalty: 0.1,
        frequency_penalty: -0.1,
        logit_bias: { '42': 1 },
        logprobs: true,
        top_logprobs: 2,
        seed: 7,
        user: 'u',
        metadata: { a: 'b' },
        service_tier: 'flex',
      }),
      {
        model: 'up/m',
        messages: [{ role: 'user', content: 'hi' }],
        tools,
        tool_choice: { type: 'function', function: { name: 'f' } },
        parallel_tool_calls: false,
        response_format,
        reasoning_effort: 'low',
        max_tokens: 10,
        max_completion_tokens: null,
        temperature: 0.5,
        top_p: null,
        n: 1,
        stop: ['x'],
        presence_penalty: 0.1,
        frequency_penalty: -0.1,
        logit_bias: { '42': 1 },
        logprobs: true,
        top_logprobs: 2,
        seed: 7,
        user: 'u',
        metadata: { a: 'b' },
        service_tier: 'flex',
        extra: { stream_options: { include_usage: false, include_obfuscation: false } },
      },
    );
  });

  it('unknown fields go to the extra of the object they came in: request, message, text part, file', () => {
    const canonical = convert({
      provider: { order: ['groq'] },
      top_k: 40,
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'Be brief.', lang: 'en' }], name: 'ops', tag: 1 },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Read this', cache_control: { type: 'ephemeral' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,AA', filename: 'a.pdf', pages: [1] } },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } },
            { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
          ],
          cache_control: { type: 'ephemeral', ttl: '1h' },
        },
        { role: 'assistant', content: 'Sure: ', prefix: true },
      ],
    });
    assert.deepEqual(canonical, {
      model: 'up/m',
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'Be brief.', extra: { lang: 'en' } }], name: 'ops', extra: { tag: 1 } },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Read this', cache_control: { type: 'ephemeral' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,AA', filename: 'a.pdf', extra: { pages: [1] } } },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } },
            { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
          ],
          cache_control: { type: 'ephemeral', ttl: '1h' },
        },
        { role: 'assistant', content: 'Sure: ', extra: { prefix: true } },
      ],
      extra: { provider: { order: ['groq'] }, top_k: 40 },
    });
  });

  it('developer is a system message that says so', () => {
    assert.deepEqual(convert({ messages: [{ role: 'developer', content: 'Use metric.' }, ...hi] }).messages, [
      { role: 'system', content: 'Use metric.', developer: true },
      { role: 'user', content: 'hi' },
    ]);
  });

  it('assistant turns: tool calls, the reasoning round trip, refusal and opaque parts; tool and legacy function results', () => {
    const call = { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } };
    assert.deepEqual(
      convert({
        messages: [
          ...hi,
          { role: 'assistant', content: null, tool_calls: [call], reasoning_content: 'Think.', reasoning_signature: 'sig' },
          { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'ok' }] },
          { role: 'function', name: 'f', content: null },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: [{ type: 'text', text: 'hm' }] },
              { type: 'text', text: 'No.' },
              { type: 'refusal', refusal: 'Cannot.', note: 1 },
            ],
            refusal: null,
          },
        ],
      }).messages,
      [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: null, tool_calls: [call], reasoning_content: 'Think.', reasoning_signature: 'sig' },
        { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'ok' }] },
        { role: 'function', name: 'f', content: null },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: [{ type: 'text', text: 'hm' }] },
            { type: 'text', text: 'No.' },
            { type: 'refusal', refusal: 'Cannot.', extra: { note: 1 } },
          ],
          refusal: null,
        },
      ],
    );
  });

  it('the door checks what the canonical types promise: text and refusal strings, file fields', () => {
    const param = (body: Record<string, unknown>) => {
      try {
        convert(body);
      } catch (err) {
        assert.ok(err instanceof GatewayError && err.status === 400);
        return err.param;
      }
      assert.fail('expected a 400');
    };
    assert.equal(param({ messages: [{ role: 'assistant', content: [{ type: 'text', text: 1 }] }] }), 'messages[0].content[0].text');
    assert.equal(param({ messages: [{ role: 'assistant', content: [{ type: 'refusal' }] }] }), 'messages[0].content[0].refusal');
    assert.equal(
      param({ messages: [{ role: 'user', content: [{ type: 'file', file: { file_data: 5 } }] }] }),
      'messages[0].content[0].file.file_data',
    );
  });
});
