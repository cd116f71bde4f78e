import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import { parseMessagesRequest } from './parse-request.ts';
import { messagesToCanonical, type ToCanonicalOptions } from './to-canonical.ts';

const strict: ToCanonicalOptions = { dropParams: false, keepCacheControl: false };
const convert = (body: Record<string, unknown>, options = strict) =>
  messagesToCanonical(parseMessagesRequest({ model: 'openai/gpt-4o', max_tokens: 256, ...body }), options);

/** The 400 a body gets: its `param` and message. */
function refusal(run: () => unknown): { param: string | null; message: string } {
  try {
    run();
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    assert.equal(err.status, 400);
    return { param: err.param, message: err.message };
  }
  assert.fail('expected a 400');
}

describe('messagesToCanonical', () => {
  it('maps a tool-use round trip with signed thinking, images, documents and settings', () => {
    const got = convert({
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather here?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'hi' }, title: 'note.txt' },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Need the tool.', signature: 'sig' },
            { type: 'redacted_thinking', data: 'opaque' },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '18C' }] },
            { type: 'text', text: 'Thanks' },
          ],
        },
      ],
      tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object' } }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      max_tokens: 8000,
      thinking: { type: 'enabled', budget_tokens: 5000 },
      temperature: 0.5,
      top_k: 40,
      stop_sequences: ['END'],
      metadata: { user_id: 'u-1' },
      service_tier: 'standard_only',
    });
    assert.deepEqual(got, {
      model: 'openai/gpt-4o',
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather here?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBOR' } },
            { type: 'file', file: { file_data: 'data:text/plain;base64,aGk=', filename: 'note.txt' } },
          ],
        },
        {
          role: 'assistant',
          reasoning_content: 'Need the tool.',
          reasoning_signature: 'sig',
          content: 'Checking.',
          tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: [{ type: 'text', text: '18C' }] },
        { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
      ],
      max_completion_tokens: 8000,
      temperature: 0.5,
      extra: { top_k: 40 },
      stop: ['END'],
      user: 'u-1',
      service_tier: 'default',
      reasoning_effort: 'low',
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object' } } }],
      tool_choice: 'required',
      parallel_tool_calls: false,
    });
  });

  it('keeps cache_control only for targets that honour it', () => {
    const body = { system: [{ type: 'text', text: 'Long.', cache_control: { type: 'ephemeral' } }], messages: [{ role: 'user', content: 'q' }] };
    assert.deepEqual(convert(body, { dropParams: false, keepCacheControl: true }).messages[0], {
      role: 'system',
      content: [{ type: 'text', text: 'Long.', cache_control: { type: 'ephemeral' } }],
    });
  });

  it('marks a failed tool result in its text', () => {
    const got = convert({
      messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'no such city', is_error: true }] }],
    });
    assert.deepEqual(got.messages, [{ role: 'tool', tool_call_id: 't', content: 'Error: no such city' }]);
  });

  it('answers 400 naming what only Anthropic has, and leaves it out with drop_params', () => {
    const server = { messages: [{ role: 'user', content: 'q' }], tools: [{ type: 'web_search_20250305', name: 'web_search' }] };
    assert.deepEqual(
      refusal(() => convert(server)),
      {
        param: 'tools[0].type',
        message: "tools[0].type: the server tool 'web_search_20250305' is only available with Anthropic models.",
      },
    );
    assert.equal(convert(server, { dropParams: true, keepCacheControl: false }).tools, undefined);
    assert.equal(refusal(() => convert({ messages: [{ role: 'user', content: 'q' }], container: 'c-1' })).param, 'container');
    const adaptive = { messages: [{ role: 'user', content: 'q' }], thinking: { type: 'adaptive' } };
    assert.equal(refusal(() => convert(adaptive)).param, 'thinking.type');
    const fileImage = { messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] }] };
    assert.equal(refusal(() => convert(fileImage)).param, 'messages[0].content[0].source');
  });

  it('validates the body with a 400 naming the field', () => {
    assert.equal(refusal(() => convert({ max_tokens: 0, messages: [] })).param, 'max_tokens');
    assert.equal(refusal(() => convert({ messages: [{ role: 'system', content: 'x' }] })).param, 'messages[0].role');
    assert.equal(refusal(() => convert({ messages: [{ role: 'user', content: [{ type: 'text' }] }] })).param, 'messages[0].content[0].text');
    assert.equal(refusal(() => convert({ messages: [] })).param, 'messages');
    const noData = [{ type: 'image', source: { type: 'base64', media_type: 'image/png' } }];
    assert.equal(refusal(() => convert({ messages: [{ role: 'user', content: noData }] })).param, 'messages[0].content[0].source.data');
    const thinking = { messages: [{ role: 'user', content: 'q' }], thinking: { type: 'enabled', budget_tokens: 2048 } };
    assert.equal(refusal(() => convert(thinking)).param, 'thinking.budget_tokens');
    assert.equal(refusal(() => convert({ messages: [{ role: 'user', content: 'q' }], temperature: 1.5 })).param, 'temperature');
  });
});
