import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import { parseChatRequest } from '../../surfaces/chat/parse-request.ts';
import { chatToCanonical } from '../../surfaces/chat/to-canonical.ts';
import { fixturePath, listFixtures } from '../../../test/helpers/fixtures.ts';
import { buildAnthropicRequest } from './build-request.ts';

const target = { baseUrl: 'https://api.anthropic.com/', apiKey: 'sk-ant-test', headers: {}, dropParams: false };

/** The upstream body for a client request (validated at the door exactly as the server does). */
function body(request: Record<string, unknown>, options: { stream?: boolean; dropParams?: boolean } = {}): Record<string, unknown> {
  const chat = chatToCanonical(parseChatRequest({ model: 'anthropic/x', ...request }));
  const model = String(request.model ?? 'claude-sonnet-4-5');
  const built = buildAnthropicRequest(chat, model, options.stream ?? false, { ...target, dropParams: options.dropParams ?? false });
  return JSON.parse(built.body ?? '');
}

function rejects(request: Record<string, unknown>, param: string, message?: RegExp): void {
  assert.throws(
    () => body(request),
    (e: unknown) => e instanceof GatewayError && e.status === 400 && e.param === param && (!message || message.test(e.message)),
    param,
  );
}

const recorded = (name: string) => JSON.parse(readFileSync(fixturePath(`anthropic/${name}.request.json`), 'utf8'));
const hi = [{ role: 'user', content: 'hi' }];

describe('anthropic request: endpoint and headers', () => {
  it('posts to /v1/messages with the key, the API version and the stream accept header', () => {
    const chat = chatToCanonical(parseChatRequest({ model: 'anthropic/claude-haiku-4-5', messages: hi }));
    const req = buildAnthropicRequest(chat, 'claude-haiku-4-5', true, { ...target, headers: { 'anthropic-beta': 'x' } });
    assert.equal(req.url, 'https://api.anthropic.com/v1/messages');
    assert.deepEqual(req.headers, {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'x',
      'x-api-key': 'sk-ant-test',
    });
    assert.deepEqual(JSON.parse(req.body ?? ''), {
      model: 'claude-haiku-4-5',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 4096,
      stream: true,
    });
    const keyless = buildAnthropicRequest(chat, 'm', false, { ...target, apiKey: undefined });
    assert.equal(keyless.headers['x-api-key'], undefined);
    assert.equal(keyless.headers.accept, 'application/json');
  });
});

describe('anthropic request: the recorded requests', () => {
  const user = (text: string) => ({ role: 'user', content: [{ type: 'text', text }] });
  const weatherTool = (r: Record<string, any>) => ({
    type: 'function',
    function: { name: r.tools[0].name, description: r.tools[0].description, parameters: r.tools[0].input_schema },
  });
  const cases: Record<string, () => Record<string, unknown>> = {
    'text-haiku45': () => ({ model: 'claude-haiku-4-5-20251001', messages: [user('Count from 1 to 3')], max_tokens: 64000 }),
    'text-haiku45-2': () => ({
      model: 'claude-haiku-4-5-20251001',
      messages: [user('Count from 1 to 3')],
      max_completion_tokens: 64000,
      temperature: 0,
    }),
    'thinking-signature': () => ({
      model: 'claude-sonnet-4-0',
      messages: [user('How do I cross the street?')],
      max_tokens: 4096,
      reasoning_effort: 'minimal',
    }),
    'parallel-tool-use': () => {
      const r = recorded('parallel-tool-use');
      return {
        model: 'claude-3-5-sonnet-20240620',
        messages: [{ role: 'user', content: 'What is the weather and current time in San Francisco?' }],
        max_tokens: 1024,
        tools: r.tools.map((t: Record<string, unknown>) => ({
          type: 'function',
          function: { name: t.name, description: t.description, parameters: t.input_schema },
        })),
      };
    },
    'tool-use': () => ({
      model: 'claude-haiku-4-5-20251001',
      messages: [user("What's the weather in Berlin? (52.5200, 13.4050)")],
      max_tokens: 64000,
      tools: [weatherTool(recorded('tool-use'))],
    }),
    'text-after-tool-result': () => ({
      model: 'claude-haiku-4-5-20251001',
      messages: [
        user("What's the weather in Berlin? (52.5200, 13.4050)"),
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'toolu_01MKSN7NHsBVKr7Jvw5pqCQq',
              type: 'function',
              function: { name: 'weather', arguments: '{"latitude":"52.5200","longitude":"13.4050"}' },
            },
          ],
        },
        {
          role: 'tool',
          tool_call_id: 'toolu_01MKSN7NHsBVKr7Jvw5pqCQq',
          content: [{ type: 'text', text: 'Current weather at 52.5200, 13.4050: 15°C, Wind: 10 km/h' }],
        },
      ],
      max_tokens: 64000,
      tools: [weatherTool(recorded('text-after-tool-result'))],
    }),
    'prompt-cache-write': () => cacheRequest(recorded('prompt-cache-write')),
    'prompt-cache-read': () => cacheRequest(recorded('prompt-cache-read')),
  };
  /** The big article goes in as a user message marked for caching (message-level cache_control). */
  function cacheRequest(r: Record<string, any>) {
    return {
      model: 'claude-3-5-sonnet-20240620',
      max_tokens: 1024,
      messages: [
        { role: 'system', content: [{ type: 'text', text: r.system[0].text }] },
        { role: 'user', content: [{ type: 'text', text: r.messages[0].content[0].text }], cache_control: { type: 'ephemeral' } },
      ],
    };
  }

  it('covers every recorded request', () => {
    const names = listFixtures('anthropic', ['.sse', '.jsonl'])
      .map((f) => f.replace(/^anthropic\//, '').replace(/\.(sse|jsonl)$/, ''))
      .filter((n) => {
        try {
          recorded(n);
          return true;
        } catch {
          return false;
        }
      });
    assert.deepEqual(names.sort(), Object.keys(cases).sort());
  });

  for (const [name, request] of Object.entries(cases)) {
    it(`${name}: the body is the recorded one`, () => {
      assert.deepEqual(body(request(), { stream: true }), recorded(name));
    });
  }
});

describe('anthropic request: mapping', () => {
  it('maps a full conversation: system, images, tool calls and consecutive tool results', () => {
    const b = body({
      model: 'claude-sonnet-4-5',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: [{ type: 'text', text: 'Use metric units.' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather here and there?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/map.jpg', detail: 'high' } },
          ],
        },
        {
          role: 'assistant',
          content: 'Checking both.',
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
            { id: 'toolu_2', type: 'function', function: { name: 'weather', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: '18C' },
        { role: 'tool', tool_call_id: 'toolu_2', content: '21C' },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [{ type: 'function', function: { name: 'weather', description: 'Weather', parameters: { type: 'object' } } }],
      tool_choice: { type: 'function', function: { name: 'weather' } },
      parallel_tool_calls: false,
      max_completion_tokens: 300,
      temperature: 0.3,
      top_p: 0.9,
      top_k: 40,
      stop: 'END',
      user: 'user-42',
      service_tier: 'auto',
    });
    assert.deepEqual(b, {
      model: 'claude-sonnet-4-5',
      system: [
        { type: 'text', text: 'You are terse.' },
        { type: 'text', text: 'Use metric units.' },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather here and there?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/map.jpg' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking both.' },
            { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_2', name: 'weather', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: '18C' },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: '21C' },
          ],
        },
        { role: 'user', content: 'Thanks' },
      ],
      max_tokens: 300,
      temperature: 0.3,
      top_p: 0.9,
      top_k: 40,
      stop_sequences: ['END'],
      tools: [{ name: 'weather', description: 'Weather', input_schema: { type: 'object' } }],
      tool_choice: { type: 'tool', name: 'weather', disable_parallel_tool_use: true },
      metadata: { user_id: 'user-42' },
      service_tier: 'auto',
    });
  });

  it('turns reasoning_content + reasoning_signature back into a leading thinking block, and reasoning_effort into a budget', () => {
    const b = body({
      reasoning_effort: 'high',
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          reasoning_content: 'I should call the tool.',
          reasoning_signature: 'EqQBCgIYAhIM',
          tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: '18C' },
      ],
      tools: [{ type: 'function', function: { name: 'weather' } }],
      tool_choice: 'auto',
    });
    assert.deepEqual(b, {
      model: 'claude-sonnet-4-5',
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'I should call the tool.', signature: 'EqQBCgIYAhIM' },
            { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '18C' }] },
      ],
      max_tokens: 16384 + 4096,
      thinking: { type: 'enabled', budget_tokens: 16384 },
      tools: [{ name: 'weather', input_schema: { type: 'object', properties: {} } }],
      tool_choice: { type: 'auto' },
    });
  });

  it('maps tool_choice none / required and parallel_tool_calls on their own', () => {
    const tools = [{ type: 'function', function: { name: 't' } }];
    assert.deepEqual(body({ messages: hi, tools, tool_choice: 'none' }).tool_choice, { type: 'none' });
    assert.deepEqual(body({ messages: hi, tools, tool_choice: 'required' }).tool_choice, { type: 'any' });
    assert.deepEqual(body({ messages: hi, tools, parallel_tool_calls: false }).tool_choice, {
      type: 'auto',
      disable_parallel_tool_use: true,
    });
    assert.equal(body({ messages: hi, tools }).tool_choice, undefined);
    assert.equal(body({ messages: hi, tool_choice: 'required' }).tool_choice, undefined);
  });

  it('takes the end user from metadata.user_id and maps service_tier default', () => {
    const b = body({ messages: hi, metadata: { user_id: 'u-1' }, service_tier: 'default' });
    assert.deepEqual([b.metadata, b.service_tier], [{ user_id: 'u-1' }, 'standard_only']);
  });

  it('sends temperature 1 with thinking as the default it is', () => {
    const b = body({ messages: hi, reasoning_effort: 'low', temperature: 1, top_p: 0.95 });
    assert.deepEqual([b.temperature, b.top_p, b.thinking], [undefined, 0.95, { type: 'enabled', budget_tokens: 4096 }]);
  });
});

describe('anthropic request: what cannot be honoured', () => {
  it('answers 400 naming the parameter', () => {
    rejects({ messages: hi, n: 2 }, 'n');
    rejects({ messages: hi, presence_penalty: 0.5 }, 'presence_penalty');
    rejects({ messages: hi, frequency_penalty: -1 }, 'frequency_penalty');
    rejects({ messages: hi, logit_bias: { '50256': -100 } }, 'logit_bias');
    rejects({ messages: hi, logprobs: true, top_logprobs: 2 }, 'logprobs');
    rejects({ messages: hi, seed: 7 }, 'seed');
    rejects({ messages: hi, reasoning_effort: 'low', response_format: { type: 'json_object' } }, 'response_format', /thinking/);
    rejects({ messages: hi, metadata: { project: 'a' } }, 'metadata.project');
    rejects({ messages: hi, service_tier: 'flex' }, 'service_tier');
    rejects({ messages: hi, temperature: 1.5 }, 'temperature', /0 to 1/);
    rejects({ messages: hi, reasoning_effort: 'low', temperature: 0.2 }, 'temperature');
    rejects({ messages: hi, reasoning_effort: 'low', top_p: 0.5 }, 'top_p');
    rejects({ messages: hi, reasoning_effort: 'low', top_k: 5 }, 'top_k');
    rejects(
      { messages: hi, reasoning_effort: 'low', tools: [{ type: 'function', function: { name: 't' } }], tool_choice: 'required' },
      'tool_choice',
    );
    rejects({ messages: hi, reasoning_effort: 'medium', max_completion_tokens: 1000 }, 'max_completion_tokens', /at least 1025/);
    rejects(
      { messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] },
      'messages[0].content[0]',
    );
    rejects({ messages: [{ role: 'function', name: 'f', content: 'x' }] }, 'messages[0]');
  });

  it('leaves them out with drop_params', () => {
    const b = body(
      {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'hi' },
              { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
            ],
          },
        ],
        n: 2,
        presence_penalty: 0.5,
        frequency_penalty: 0.5,
        logit_bias: { '1': 1 },
        logprobs: true,
        seed: 7,
        response_format: { type: 'json_object' },
        metadata: { project: 'a' },
        service_tier: 'flex',
        reasoning_effort: 'low',
        temperature: 0.2,
        top_p: 0.5,
        top_k: 5,
        tools: [{ type: 'function', function: { name: 't' } }],
        tool_choice: 'required',
      },
      { dropParams: true },
    );
    assert.deepEqual(b, {
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      max_tokens: 4096 + 4096,
      thinking: { type: 'enabled', budget_tokens: 4096 },
      tools: [{ name: 't', input_schema: { type: 'object', properties: {} } }],
    });
    const small = body({ messages: hi, reasoning_effort: 'high', max_tokens: 500 }, { dropParams: true });
    assert.deepEqual([small.max_tokens, small.thinking], [500, undefined]);
  });
});

describe('anthropic request: response_format', () => {
  const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
  const jsonSchema = { type: 'json_schema', json_schema: { name: 'place', schema, strict: true } };
  const answerTool = (input_schema: Record<string, unknown>) => ({
    name: 'sluice_structured_output',
    description: `Give your final answer by calling this tool: its input is the answer, as JSON.${input_schema === schema ? ' The answer is a place.' : ''}`,
    input_schema,
  });

  it('json_schema is output_config.format on Claude 4.5 and later, with no tool', () => {
    const b = body({ model: 'claude-sonnet-4-5-20250929', messages: hi, response_format: jsonSchema });
    assert.deepEqual(b.output_config, { format: { type: 'json_schema', schema } });
    assert.equal(b.tools, undefined);
    // Thinking and a native schema go together.
    const thinking = body({ model: 'claude-opus-4-6', messages: hi, response_format: jsonSchema, reasoning_effort: 'low' });
    assert.deepEqual(thinking.output_config, { format: { type: 'json_schema', schema } });
  });

  it('json_schema on an older model is a forced tool taking the schema, called once', () => {
    const b = body({ model: 'claude-3-7-sonnet-latest', messages: hi, response_format: jsonSchema });
    assert.equal(b.output_config, undefined);
    assert.deepEqual(b.tools, [answerTool(schema)]);
    assert.deepEqual(b.tool_choice, { type: 'tool', name: 'sluice_structured_output', disable_parallel_tool_use: true });
  });

  it('json_object is a forced tool taking any object, on every model', () => {
    const b = body({ model: 'claude-sonnet-4-5', messages: hi, response_format: { type: 'json_object' } });
    assert.deepEqual(b.tools, [answerTool({ type: 'object' })]);
    assert.deepEqual(b.tool_choice, { type: 'tool', name: 'sluice_structured_output', disable_parallel_tool_use: true });
  });

  it("with the client's tools the turn ends in a call or the answer (any); tool_choice none forces the answer", () => {
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }];
    const request = { model: 'claude-3-5-haiku-latest', messages: hi, tools, response_format: { type: 'json_object' } };
    const b = body(request);
    assert.deepEqual(
      (b.tools as { name: string }[]).map((t) => t.name),
      ['lookup', 'sluice_structured_output'],
    );
    assert.deepEqual(b.tool_choice, { type: 'any' });
    assert.deepEqual(body({ ...request, tool_choice: 'none' }).tool_choice, {
      type: 'tool',
      name: 'sluice_structured_output',
      disable_parallel_tool_use: true,
    });
    // A tool the client forces stays forced.
    const forced = body({ ...request, tool_choice: { type: 'function', function: { name: 'lookup' } } });
    assert.deepEqual(forced.tool_choice, { type: 'tool', name: 'lookup' });
  });

  it("refuses a client tool named like sluice's answer tool", () => {
    rejects({ messages: hi, tools: [{ type: 'function', function: { name: 'sluice_structured_output' } }] }, 'tools[0].function.name');
  });
});

describe('anthropic request: safety_identifier', () => {
  it('is metadata.user_id when no user is named', () => {
    assert.deepEqual(body({ messages: hi, safety_identifier: 'hash-1' }).metadata, { user_id: 'hash-1' });
    assert.deepEqual(body({ messages: hi, safety_identifier: 'hash-1', user: 'u-2' }).metadata, { user_id: 'u-2' });
  });
});
