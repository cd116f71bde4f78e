import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { CanonicalMessage } from '../canonical/request.ts';
import { parseResponsesRequest } from './parse-request.ts';
import { responsesToCanonical } from './to-canonical.ts';

/** The client's body through the door (schema) and into the canonical request. */
const convert = (body: Record<string, unknown>, history: CanonicalMessage[] = []) => responsesToCanonical(parseResponsesRequest(body), history);

function rejects(body: Record<string, unknown>, param: string, message: RegExp) {
  assert.throws(
    () => parseResponsesRequest(body),
    (err: unknown) => {
      assert.ok(err instanceof GatewayError);
      assert.deepEqual({ status: err.status, code: err.code, param: err.param }, { status: 400, code: 'invalid_request', param });
      assert.match(err.message, message);
      return true;
    },
  );
}

describe('responsesToCanonical', () => {
  it('a string input is one user message; stream stays with the surface', () => {
    assert.deepEqual(convert({ model: 'up/m', input: 'Hello', stream: true }), {
      model: 'up/m',
      messages: [{ role: 'user', content: 'Hello' }],
    });
  });

  it('message items: every role (developer is a system message that says so), text and image parts, assistant output_text and refusal parts', () => {
    const chat = convert({
      model: 'up/m',
      stream: true,
      input: [
        { role: 'system', content: 'Be brief.' },
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Use metric.' }] },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is this?' },
            { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'low' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAAA' },
          ],
        },
        { type: 'message', role: 'assistant', id: 'msg_1', status: 'completed', content: [{ type: 'output_text', text: 'A cat.', annotations: [] }] },
        { role: 'user', content: 'Draw it' },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot draw.' }] },
      ],
    });
    assert.deepEqual(chat, {
      model: 'up/m',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'system', content: 'Use metric.', developer: true },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          ],
        },
        { role: 'assistant', content: 'A cat.' },
        { role: 'user', content: 'Draw it' },
        { role: 'assistant', content: 'I cannot draw.' },
      ],
    });
  });

  it('the text and function_call items of a turn are one assistant message; function_call_output items are tool messages', () => {
    const chat = convert({
      model: 'up/m',
      input: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Two cities.' }], encrypted_content: 'sig-1' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking both.' }] },
        { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: 'call_2', name: 'weather', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '18C' },
        {
          type: 'function_call_output',
          call_id: 'call_2',
          output: [
            { type: 'input_text', text: '2' },
            { type: 'input_text', text: '4C' },
          ],
        },
      ],
    });
    assert.deepEqual(chat.messages, [
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: 'Checking both.',
        reasoning_content: 'Two cities.',
        reasoning_signature: 'sig-1',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '18C' },
      { role: 'tool', tool_call_id: 'call_2', content: '24C' },
    ]);
  });

  it('instructions lead, then the stored conversation, then this input', () => {
    const history: CanonicalMessage[] = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello!' },
    ];
    assert.deepEqual(convert({ model: 'up/m', instructions: 'Answer in French.', input: 'Thanks' }, history).messages, [
      { role: 'system', content: 'Answer in French.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: 'Thanks' },
    ]);
  });

  it('tools, tool_choice, parallel_tool_calls, text.format json_schema, reasoning.effort, max_output_tokens and sampling map one to one', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const chat = convert({
      model: 'up/m',
      input: 'Go',
      tools: [
        { type: 'function', name: 'weather', description: 'Weather by city', parameters: schema, strict: true },
        { type: 'function', name: 'now' },
      ],
      tool_choice: { type: 'function', name: 'weather' },
      parallel_tool_calls: false,
      text: { format: { type: 'json_schema', name: 'answer', schema, description: 'The answer', strict: true } },
      reasoning: { effort: 'high', summary: 'auto' },
      max_output_tokens: 256,
      temperature: 0.2,
      top_p: 0.9,
      metadata: { team: 'a' },
      user: 'u-1',
    });
    assert.deepEqual(chat, {
      model: 'up/m',
      messages: [{ role: 'user', content: 'Go' }],
      tools: [
        { type: 'function', function: { name: 'weather', description: 'Weather by city', parameters: schema, strict: true } },
        { type: 'function', function: { name: 'now' } },
      ],
      tool_choice: { type: 'function', function: { name: 'weather' } },
      parallel_tool_calls: false,
      max_completion_tokens: 256,
      temperature: 0.2,
      top_p: 0.9,
      reasoning_effort: 'high',
      metadata: { team: 'a' },
      user: 'u-1',
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'answer', schema, description: 'The answer', strict: true },
      },
    });
  });

  it('tool_choice as a string and text.format json_object', () => {
    const chat = convert({ model: 'up/m', input: 'Go', tool_choice: 'required', text: { format: { type: 'json_object' } } });
    assert.deepEqual(
      { tool_choice: chat.tool_choice, response_format: chat.response_format },
      {
        tool_choice: 'required',
        response_format: { type: 'json_object' },
      },
    );
  });

  describe('a 400 naming the field for what sluice cannot do', () => {
    it('a hosted tool (web_search)', () => {
      rejects({ model: 'up/m', input: 'Go', tools: [{ type: 'web_search' }] }, 'tools[0].type', /Tool type 'web_search' is not supported/);
    });
    it('a hosted tool after a function tool', () => {
      rejects(
        {
          model: 'up/m',
          input: 'Go',
          tools: [
            { type: 'function', name: 'f' },
            { type: 'file_search', vector_store_ids: [] },
          ],
        },
        'tools[1].type',
        /Tool type 'file_search' is not supported/,
      );
    });
    it('background', () => {
      rejects({ model: 'up/m', input: 'Go', background: true }, 'background', /^Unsupported parameter: 'background'\.$/);
    });
    it('an unknown field', () => {
      rejects({ model: 'up/m', input: 'Go', prompt: { id: 'pmpt_1' } }, 'prompt', /^Unsupported parameter: 'prompt'\.$/);
    });
    it('an unknown nested field (it would otherwise be dropped without a word)', () => {
      rejects(
        { model: 'up/m', input: 'Go', reasoning: { effort: 'low', budget: 10 } },
        'reasoning.budget',
        /^Unsupported parameter: 'reasoning.budget'\.$/,
      );
      rejects({ model: 'up/m', input: 'Go', tools: [{ type: 'function', name: 'f', cache: true }] }, 'tools[0].cache', /Unsupported parameter/);
    });
    it('an input part sluice cannot carry (input_file)', () => {
      rejects(
        { model: 'up/m', input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file_1' }] }] },
        'input[0].content[0].type',
        /must be one of input_text, input_image, output_text, refusal\.$/,
      );
    });
    it('a missing input', () => {
      rejects({ model: 'up/m' }, 'input', /Invalid value for 'input'/);
    });
  });
});
