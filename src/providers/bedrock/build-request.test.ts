import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import { chatRequestSchema } from '../../surfaces/chat/request-schema.ts';
import { chatToCanonical } from '../../surfaces/chat/to-canonical.ts';
import { readFixture } from '../../../test/helpers/fixtures.ts';
import { buildBedrockRequest, buildConverseBody } from './build-request.ts';

const chat = (body: Record<string, unknown>): CanonicalRequest => chatToCanonical(chatRequestSchema.parse({ model: 'bedrock/x', ...body }));
const recorded = (name: string) => JSON.parse(readFixture(`bedrock/${name}.request.json`).toString('utf8')) as Record<string, unknown>;
const body = (request: Record<string, unknown>, model = 'us.amazon.nova-micro-v1:0', dropParams = false) =>
  JSON.parse(JSON.stringify(buildConverseBody(chat(request), model, dropParams))) as Record<string, unknown>;

/** The 400 a request gets, as [param, message]. */
function rejection(request: Record<string, unknown>, model = 'us.amazon.nova-micro-v1:0'): [string | null, string] {
  try {
    buildConverseBody(chat(request), model, false);
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    assert.equal(err.status, 400);
    return [err.param, err.message];
  }
  assert.fail('expected a 400');
}

const tools = [
  {
    type: 'function',
    function: {
      name: 'get_capital',
      description: 'Get the capital of a country.',
      parameters: {
        properties: { country: { description: 'The country name.', title: 'Country', type: 'string' } },
        required: ['country'],
        type: 'object',
        additionalProperties: false,
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'get_temperature',
      description: 'Get the temperature in a city.',
      parameters: {
        properties: { city: { description: 'The city name.', title: 'City', type: 'string' } },
        required: ['city'],
        type: 'object',
        additionalProperties: false,
      },
    },
  },
];

describe('bedrock request: the recorded requests', () => {
  it('converse-text-nova-micro: system + user + temperature, exactly', () => {
    const sent = body({
      messages: [
        { role: 'system', content: 'You are a helpful chatbot.' },
        { role: 'user', content: 'What is the capital of France?' },
      ],
      temperature: 0,
    });
    assert.deepEqual(sent, recorded('converse-text-nova-micro'));
  });

  it('converse-tool-use-nova-micro: tools and top_p, exactly', () => {
    const sent = body({
      messages: [
        { role: 'system', content: 'You are a helpful chatbot.' },
        { role: 'user', content: 'What is the temperature of the capital of France?' },
      ],
      top_p: 0.5,
      tools,
    });
    assert.deepEqual(sent, recorded('converse-tool-use-nova-micro'));
  });

  it('converse-text-after-tool-nova-micro: assistant text + toolUse, then the toolResult', () => {
    const sent = body({
      messages: [
        { role: 'system', content: 'You are a helpful chatbot.' },
        { role: 'user', content: 'What is the temperature of the capital of France?' },
        {
          role: 'assistant',
          content:
            '<thinking> To find the temperature of the capital of France, I need to first determine the capital of France and then get the current temperature in that city. The capital of France is Paris. I will use the "get_temperature" tool to find the current temperature in Paris.</thinking>\n',
          tool_calls: [
            { id: 'tooluse_lAG_zP8QRHmSYOwZzzaCqA', type: 'function', function: { name: 'get_temperature', arguments: '{"city": "Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'tooluse_lAG_zP8QRHmSYOwZzzaCqA', content: '30°C' },
      ],
      top_p: 0.5,
      tools,
    });
    // pydantic-ai also sent `status: "success"` on the result; the chat surface has no such field.
    const want = recorded('converse-text-after-tool-nova-micro') as { messages: { content: { toolResult?: { status?: string } }[] }[] };
    delete want.messages[2].content[0].toolResult?.status;
    assert.deepEqual(sent, want);
  });

  it('converse-tool-use-claude3-sonnet: max_tokens + temperature + one tool, exactly', () => {
    const sent = body(
      {
        messages: [{ role: 'user', content: 'What is the weather in Barcelona?' }],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              description: 'Get the current weather for a location',
              parameters: { type: 'object', properties: { location: { type: 'string', description: 'The city name' } }, required: ['location'] },
            },
          },
        ],
        max_tokens: 300,
        temperature: 0.5,
      },
      'anthropic.claude-3-sonnet-20240229-v1:0',
    );
    assert.deepEqual(sent, recorded('converse-tool-use-claude3-sonnet'));
  });

  it('converse-reasoning-claude-sonnet4: reasoning_effort minimal is the recorded 1024-token thinking budget', () => {
    const sent = body({ messages: [{ role: 'user', content: 'Hello' }], reasoning_effort: 'minimal' }, 'us.anthropic.claude-sonnet-4-20250514-v1:0');
    const want = recorded('converse-reasoning-claude-sonnet4');
    assert.deepEqual(sent.messages, want.messages);
    assert.deepEqual(sent.additionalModelRequestFields, want.additionalModelRequestFields);
    // Differences: sluice sends no empty system list, and sets maxTokens so the answer has room after the thinking.
    assert.deepEqual(want.system, []);
    assert.equal(sent.system, undefined);
    assert.deepEqual(sent.inferenceConfig, { maxTokens: 1024 + 4096 });
  });

  it('converse-text-nova2-lite and converse-error-400-invalid-model: a bare user turn', () => {
    assert.deepEqual(body({ messages: [{ role: 'user', content: 'Count from 1 to 3' }] }), recorded('converse-text-nova2-lite'));
    const sent = body({ messages: [{ role: 'user', content: 'hello' }] }, 'us.does-not-exist-model-v1:0');
    const want = recorded('converse-error-400-invalid-model');
    assert.deepEqual(sent, { messages: want.messages, inferenceConfig: want.inferenceConfig });
  });
});

describe('bedrock request: URL and headers', () => {
  const target = { endpoint: 'https://bedrock-runtime.us-east-1.amazonaws.com/', dropParams: false };
  const request = chat({ messages: [{ role: 'user', content: 'hi' }] });

  it('streams from /model/{url-encoded id}/converse-stream and asks for the eventstream', () => {
    assert.deepEqual(buildBedrockRequest(request, 'us.amazon.nova-micro-v1:0', true, target), {
      url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/us.amazon.nova-micro-v1%3A0/converse-stream',
      headers: { 'content-type': 'application/json', accept: 'application/vnd.amazon.eventstream' },
      body: '{"messages":[{"role":"user","content":[{"text":"hi"}]}],"inferenceConfig":{}}',
    });
  });

  it('answers non-stream requests from /converse; an ARN is one path segment', () => {
    const arn = 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-20250514-v1:0';
    const built = buildBedrockRequest(request, arn, false, target);
    assert.equal(
      built.url,
      'https://bedrock-runtime.us-east-1.amazonaws.com/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.anthropic.claude-sonnet-4-20250514-v1%3A0/converse',
    );
    assert.equal(built.headers.accept, 'application/json');
  });
});

describe('bedrock request: mapping', () => {
  it('maps a multi-turn tool conversation: system anywhere, parallel results merged, images as bytes', () => {
    const sent = body({
      messages: [
        { role: 'developer', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather here and there?' },
            { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'tooluse_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
            { id: 'tooluse_2', type: 'function', function: { name: 'get_time', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'tooluse_1', content: 'Rain' },
        {
          role: 'tool',
          tool_call_id: 'tooluse_2',
          content: [
            { type: 'text', text: '12:00' },
            { type: 'text', text: 'UTC' },
          ],
        },
        { role: 'user', content: 'And tomorrow?' },
        { role: 'system', content: [{ type: 'text', text: 'Answer in English.' }] },
      ],
      max_tokens: 100,
      max_completion_tokens: 200,
      stop: 'END',
      parallel_tool_calls: true,
      tools: [
        { type: 'function', function: { name: 'get_weather', strict: true, parameters: { type: 'object' } } },
        { type: 'function', function: { name: 'get_time' } },
      ],
      tool_choice: 'auto',
    });
    assert.deepEqual(sent, {
      messages: [
        {
          role: 'user',
          content: [{ text: 'Weather here and there?' }, { image: { format: 'jpeg', source: { bytes: '/9j/4AAQ' } } }],
        },
        {
          role: 'assistant',
          content: [
            { toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Oslo' } } },
            { toolUse: { toolUseId: 'tooluse_2', name: 'get_time', input: {} } },
          ],
        },
        {
          role: 'user',
          content: [
            { toolResult: { toolUseId: 'tooluse_1', content: [{ text: 'Rain' }] } },
            { toolResult: { toolUseId: 'tooluse_2', content: [{ text: '12:00' }, { text: 'UTC' }] } },
            { text: 'And tomorrow?' },
          ],
        },
      ],
      system: [{ text: 'Be brief.' }, { text: 'Answer in English.' }],
      inferenceConfig: { maxTokens: 200, stopSequences: ['END'] },
      toolConfig: {
        tools: [
          { toolSpec: { name: 'get_weather', inputSchema: { json: { type: 'object' } }, strict: true } },
          { toolSpec: { name: 'get_time', inputSchema: { json: { type: 'object', properties: {} } } } },
        ],
        toolChoice: { auto: {} },
      },
    });
  });

  it("turns Anthropic's cache_control into cache points after the marked block or message", () => {
    const ephemeral = { type: 'ephemeral' };
    const got = body({
      messages: [
        {
          role: 'system',
          content: [
            { type: 'text', text: 'Long rules.', cache_control: ephemeral },
            { type: 'text', text: 'Today.' },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'A long document.', cache_control: ephemeral },
            { type: 'text', text: 'Q?' },
          ],
        },
        { role: 'assistant', content: 'A.', cache_control: ephemeral },
        { role: 'user', content: 'Next?' },
      ],
    });
    const point = { cachePoint: { type: 'default' } };
    assert.deepEqual(got.system, [{ text: 'Long rules.' }, point, { text: 'Today.' }]);
    assert.deepEqual(got.messages, [
      { role: 'user', content: [{ text: 'A long document.' }, point, { text: 'Q?' }] },
      { role: 'assistant', content: [{ text: 'A.' }, point] },
      { role: 'user', content: [{ text: 'Next?' }] },
    ]);
    const bad = { messages: [{ role: 'user', content: [{ type: 'text', text: 'x', cache_control: { type: 'forever' } }] }] };
    assert.equal(rejection(bad)[0], 'messages[0].content[0].cache_control');
  });

  it('sends the reasoning back as a signed thinking block before the turn it belongs to', () => {
    const sent = body(
      {
        messages: [
          { role: 'user', content: 'Time?' },
          {
            role: 'assistant',
            content: '',
            reasoning_content: 'The user wants the time.',
            reasoning_signature: 'EqQBCkgIBxABGAIqQ',
            tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_time', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'toolu_1', content: '12:00' },
          // Reasoning without a signature is display text: Anthropic models would refuse it.
          { role: 'assistant', content: 'It is noon.', reasoning_content: 'Easy.' },
          { role: 'user', content: 'Thanks' },
        ],
        tools: [{ type: 'function', function: { name: 'get_time' } }],
        reasoning_effort: 'low',
        max_tokens: 8000,
      },
      'us.anthropic.claude-sonnet-4-20250514-v1:0',
    );
    assert.deepEqual(sent.messages, [
      { role: 'user', content: [{ text: 'Time?' }] },
      {
        role: 'assistant',
        content: [
          { reasoningContent: { reasoningText: { text: 'The user wants the time.', signature: 'EqQBCkgIBxABGAIqQ' } } },
          { toolUse: { toolUseId: 'toolu_1', name: 'get_time', input: {} } },
        ],
      },
      { role: 'user', content: [{ toolResult: { toolUseId: 'toolu_1', content: [{ text: '12:00' }] } }] },
      { role: 'assistant', content: [{ text: 'It is noon.' }] },
      { role: 'user', content: [{ text: 'Thanks' }] },
    ]);
    assert.deepEqual(sent.additionalModelRequestFields, { thinking: { type: 'enabled', budget_tokens: 2048 } });
    assert.deepEqual(sent.inferenceConfig, { maxTokens: 8000 });
  });

  it('keeps the thinking budget below max_tokens, as Anthropic requires', () => {
    const sent = body(
      { messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'high', max_tokens: 5000 },
      'anthropic.claude-3-7-sonnet-20250219-v1:0',
    );
    assert.deepEqual(sent.additionalModelRequestFields, { thinking: { type: 'enabled', budget_tokens: 4999 } });
    assert.deepEqual(sent.inferenceConfig, { maxTokens: 5000 });
    assert.deepEqual(
      rejection(
        { messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'low', max_tokens: 1000 },
        'anthropic.claude-3-7-sonnet-20250219-v1:0',
      ),
      [
        'reasoning_effort',
        'thinking needs a budget of at least 1024 tokens below max_tokens (set drop_params: true on the bedrock provider to ignore it).',
      ],
    );
    // reasoning_effort "none" is no thinking, on any model.
    assert.equal(body({ messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'none' }).additionalModelRequestFields, undefined);
  });

  it('maps tool_choice required and a named function; none leaves the tools out', () => {
    const base = { messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'f' } }] };
    const choice = (tool_choice: unknown) => (body({ ...base, tool_choice }).toolConfig as { toolChoice?: unknown } | undefined)?.toolChoice;
    assert.deepEqual(choice('required'), { any: {} });
    assert.deepEqual(choice({ type: 'function', function: { name: 'f' } }), { tool: { name: 'f' } });
    assert.equal(body({ ...base, tool_choice: 'none' }).toolConfig, undefined);
  });

  it('tool_choice none in a conversation that holds tool calls is a 400 (Converse needs the tools then), or auto under drop_params', () => {
    const request = {
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 't1', content: 'ok' },
      ],
      tools: [{ type: 'function', function: { name: 'f' } }],
      tool_choice: 'none',
    };
    assert.equal(rejection(request)[0], 'tool_choice');
    assert.deepEqual(body(request, 'us.amazon.nova-micro-v1:0', true).toolConfig, {
      tools: [{ toolSpec: { name: 'f', inputSchema: { json: { type: 'object', properties: {} } } } }],
    });
  });

  it('maps response_format json_schema to outputConfig (the schema as a JSON string)', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    const sent = body({
      messages: [{ role: 'user', content: 'x' }],
      response_format: { type: 'json_schema', json_schema: { name: 'city', description: 'A city', schema, strict: true } },
    });
    assert.deepEqual(sent.outputConfig, {
      textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: JSON.stringify(schema), name: 'city', description: 'A city' } } },
    });
    assert.equal(body({ messages: [{ role: 'user', content: 'x' }], response_format: { type: 'text' } }).outputConfig, undefined);
  });

  it('json_schema on Claude before 4.5, and json_object on any model, is a forced tool whose input is the answer', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } } };
    const messages = [{ role: 'user', content: 'x' }];
    const old = body(
      { messages, response_format: { type: 'json_schema', json_schema: { name: 'city', schema } } },
      'anthropic.claude-3-5-sonnet-20240620-v1:0',
    );
    assert.equal(old.outputConfig, undefined);
    const description = 'Give your final answer by calling this tool: its input is the answer, as JSON. The answer is a city.';
    assert.deepEqual(old.toolConfig, {
      tools: [{ toolSpec: { name: 'sluice_structured_output', description, inputSchema: { json: schema } } }],
      toolChoice: { tool: { name: 'sluice_structured_output' } },
    });
    const object = body({ messages, response_format: { type: 'json_object' } });
    assert.deepEqual((object.toolConfig as any).tools[0].toolSpec.inputSchema, { json: { type: 'object' } });
    // The client's tools may still be called: then any tool, its or the answer.
    const withTools = body({ messages, response_format: { type: 'json_object' }, tools: [{ type: 'function', function: { name: 'f' } }] });
    assert.deepEqual(
      (withTools.toolConfig as any).tools.map((t: any) => t.toolSpec.name),
      ['f', 'sluice_structured_output'],
    );
    assert.deepEqual((withTools.toolConfig as any).toolChoice, { any: {} });
  });

  it('a forced JSON answer cannot go with thinking: 400 naming response_format, or text under drop_params', () => {
    const request = { messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'low', response_format: { type: 'json_object' } };
    const claude = 'us.anthropic.claude-3-7-sonnet-20250219-v1:0';
    assert.equal(rejection(request, claude)[0], 'response_format');
    assert.equal(body(request, claude, true).toolConfig, undefined);
  });

  it('puts metadata and user into requestMetadata, and maps service tiers', () => {
    const sent = body({ messages: [{ role: 'user', content: 'x' }], metadata: { team: 'search' }, user: 'user-42', service_tier: 'flex' });
    assert.deepEqual(sent.requestMetadata, { team: 'search', user: 'user-42' });
    const safety = body({ messages: [{ role: 'user', content: 'x' }], safety_identifier: 'hash-1' });
    assert.deepEqual(safety.requestMetadata, { safety_identifier: 'hash-1' });
    assert.deepEqual(sent.serviceTier, { type: 'flex' });
    assert.equal(body({ messages: [{ role: 'user', content: 'x' }], service_tier: 'auto' }).serviceTier, undefined);
  });
});

describe('bedrock request: what Converse cannot honour', () => {
  const user = [{ role: 'user', content: 'x' }];
  const cases: [Record<string, unknown>, string][] = [
    [{ n: 2 }, 'n'],
    [{ presence_penalty: 0.5 }, 'presence_penalty'],
    [{ frequency_penalty: 0.5 }, 'frequency_penalty'],
    [{ logit_bias: { '50256': -100 } }, 'logit_bias'],
    [{ logprobs: true }, 'logprobs'],
    [{ top_logprobs: 3 }, 'top_logprobs'],
    [{ seed: 7 }, 'seed'],
    [{ parallel_tool_calls: false }, 'parallel_tool_calls'],
    [{ service_tier: 'scale' }, 'service_tier'],
    [{ reasoning_effort: 'high' }, 'reasoning_effort'],
    [{ tools: [{ type: 'openrouter:web_search' }] }, 'tools[0]'],
  ];

  it('answers 400 naming each parameter', () => {
    assert.deepEqual(
      cases.map(([extra]) => rejection({ messages: user, ...extra })[0]),
      cases.map(([, param]) => param),
    );
    assert.equal(
      rejection({ messages: user, seed: 7 })[1],
      'Bedrock Converse has no seed (set drop_params: true on the bedrock provider to ignore it).',
    );
  });

  it('leaves them all out under drop_params', () => {
    const sent = body({ messages: user, ...Object.assign({}, ...cases.map(([extra]) => extra)) }, 'us.amazon.nova-micro-v1:0', true);
    assert.deepEqual(sent, { messages: [{ role: 'user', content: [{ text: 'x' }] }], inferenceConfig: {} });
  });

  it('accepts the no-op values of those parameters', () => {
    const sent = body({ messages: user, n: 1, presence_penalty: 0, frequency_penalty: 0, logit_bias: {}, logprobs: false, top_logprobs: 0 });
    assert.deepEqual(sent, { messages: [{ role: 'user', content: [{ text: 'x' }] }], inferenceConfig: {} });
  });

  it('rejects content it cannot send, whatever drop_params says', () => {
    const image = (url: string) => ({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'see' },
            { type: 'image_url', image_url: { url } },
          ],
        },
      ],
    });
    assert.deepEqual(rejection(image('https://example.com/cat.png')), [
      'messages[0].content[1].image_url.url',
      'Bedrock Converse needs the image bytes: send the image as a base64 data URL (data:image/png;base64,…).',
    ]);
    assert.deepEqual(rejection(image('data:image/tiff;base64,AAAA')), [
      'messages[0].content[1].image_url.url',
      'Bedrock Converse takes png, jpeg, gif or webp images, not image/tiff.',
    ]);
    assert.equal(rejection(image('data:image/png,%89PNG'))[0], 'messages[0].content[1].image_url.url');
    assert.throws(() => buildConverseBody(chat(image('https://example.com/cat.png')), 'm', true), GatewayError);
    assert.equal(
      rejection({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] })[0],
      'messages[0].content[0].type',
    );
    assert.equal(rejection({ messages: [{ role: 'function', name: 'f', content: 'x' }] })[0], 'messages[0].role');
    assert.equal(
      rejection({
        messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{oops' } }] }],
      })[0],
      'messages[0].tool_calls[0].function.arguments',
    );
  });
});
