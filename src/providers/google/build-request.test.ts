import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import { assemble } from '../../protocol/canonical/assemble.ts';
import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import { chatRequestSchema } from '../../surfaces/chat/request-schema.ts';
import { chatToCanonical } from '../../surfaces/chat/to-canonical.ts';
import { readFixture } from '../../../test/helpers/fixtures.ts';
import { geminiStreamBody } from '../../../test/helpers/gemini-fixtures.ts';
import { buildGoogleRequest } from './build-request.ts';
import { createGeminiStreamDecoder } from './decode-stream.ts';

const target = { name: 'google', baseUrl: 'https://generativelanguage.googleapis.com', apiKey: 'AIza-test', dropParams: false };
const request = (body: Record<string, unknown>): CanonicalRequest => chatToCanonical(chatRequestSchema.parse({ model: 'google/x', ...body }));
const build = (body: Record<string, unknown>, model = 'gemini-2.5-flash', t = target) =>
  JSON.parse(buildGoogleRequest(request(body), model, true, t).body ?? '') as Record<string, unknown>;
const badRequest = (param: string) => (e: unknown) => e instanceof GatewayError && e.status === 400 && e.param === param;

const weatherTool = {
  type: 'function',
  function: {
    name: 'weather',
    description: 'Gets current weather for a location',
    parameters: {
      type: 'object',
      properties: {
        latitude: { type: 'string', description: 'Latitude (e.g., 52.5200)' },
        longitude: { type: 'string', description: 'Longitude (e.g., 13.4050)' },
      },
      required: ['latitude', 'longitude'],
    },
  },
};

describe('buildGoogleRequest: endpoint and headers', () => {
  it('streams from :streamGenerateContent?alt=sse with the key in a header, never the URL', () => {
    const req = buildGoogleRequest(request({ messages: [{ role: 'user', content: 'Hi' }] }), 'gemini-2.5-flash', true, target);
    assert.equal(req.url, 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    assert.deepEqual(req.headers, { 'content-type': 'application/json', accept: 'text/event-stream', 'x-goog-api-key': 'AIza-test' });
    assert.ok(!req.url.includes('AIza'));
  });

  it('non-stream calls :generateContent; a versioned base URL and a tuned-model path are kept', () => {
    const body = request({ messages: [{ role: 'user', content: 'Hi' }] });
    const plain = buildGoogleRequest(body, 'gemini-2.5-flash', false, target);
    assert.equal(plain.url, 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent');
    assert.equal(plain.headers.accept, 'application/json');
    const proxied = buildGoogleRequest(body, 'tunedModels/my-tune', false, { ...target, baseUrl: 'http://127.0.0.1:9/gemini/v1beta/' });
    assert.equal(proxied.url, 'http://127.0.0.1:9/gemini/v1beta/tunedModels/my-tune:generateContent');
    const keyless = buildGoogleRequest(body, 'gemini-2.5-flash', false, { ...target, apiKey: undefined });
    assert.equal(keyless.headers['x-goog-api-key'], undefined);
  });
});

describe('buildGoogleRequest: the body', () => {
  it('maps every generation parameter, tools, tool_choice and a JSON schema answer', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    assert.deepEqual(
      build(
        {
          messages: [
            { role: 'system', content: 'You are terse.' },
            { role: 'user', content: 'Weather in Berlin?' },
          ],
          max_completion_tokens: 800,
          max_tokens: 100,
          temperature: 0.2,
          top_p: 0.9,
          stop: 'END',
          n: 2,
          seed: 42,
          presence_penalty: 0.5,
          frequency_penalty: -0.5,
          logprobs: true,
          top_logprobs: 3,
          response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } },
          tools: [weatherTool, { type: 'function', function: { name: 'now' } }],
          tool_choice: { type: 'function', function: { name: 'weather' } },
          parallel_tool_calls: true,
          reasoning_effort: 'low',
          user: 'user-123',
          metadata: { team: 'a' },
          stream: true,
          stream_options: { include_usage: true },
        },
        'gemini-2.5-flash',
      ),
      {
        contents: [{ role: 'user', parts: [{ text: 'Weather in Berlin?' }] }],
        systemInstruction: { parts: [{ text: 'You are terse.' }] },
        tools: [
          {
            functionDeclarations: [
              { name: 'weather', description: 'Gets current weather for a location', parametersJsonSchema: weatherTool.function.parameters },
              { name: 'now' },
            ],
          },
        ],
        toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['weather'] } },
        generationConfig: {
          maxOutputTokens: 800,
          temperature: 0.2,
          topP: 0.9,
          stopSequences: ['END'],
          candidateCount: 2,
          seed: 42,
          presencePenalty: 0.5,
          frequencyPenalty: -0.5,
          responseLogprobs: true,
          logprobs: 3,
          responseMimeType: 'application/json',
          responseJsonSchema: schema,
          thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
        },
      },
    );
  });

  it('tool_choice modes, json_object and stop lists', () => {
    const base = { messages: [{ role: 'user', content: 'x' }], tools: [weatherTool] };
    const mode = (tool_choice: string) => (build({ ...base, tool_choice }).toolConfig as { functionCallingConfig: unknown }).functionCallingConfig;
    assert.deepEqual(mode('auto'), { mode: 'AUTO' });
    assert.deepEqual(mode('none'), { mode: 'NONE' });
    assert.deepEqual(mode('required'), { mode: 'ANY' });
    assert.equal(build(base).toolConfig, undefined);
    assert.deepEqual(build({ messages: base.messages, response_format: { type: 'json_object' }, stop: ['a', 'b'] }).generationConfig, {
      stopSequences: ['a', 'b'],
      responseMimeType: 'application/json',
    });
    assert.deepEqual(build({ messages: base.messages, response_format: { type: 'text' } }).generationConfig, {});
  });

  it('parameters Gemini cannot honour are 400s naming them', () => {
    const messages = [{ role: 'user', content: 'x' }];
    assert.throws(() => build({ messages, logit_bias: { '50256': -100 } }), badRequest('logit_bias'));
    assert.throws(() => build({ messages, tools: [weatherTool], parallel_tool_calls: false }), badRequest('parallel_tool_calls'));
    assert.throws(() => build({ messages, modalities: ['text', 'audio'] }), badRequest('modalities'));
    assert.throws(() => build({ messages, audio: { voice: 'alloy', format: 'mp3' } }), badRequest('audio'));
    assert.throws(() => build({ messages, prediction: { type: 'content', content: 'x' } }), badRequest('prediction'));
    assert.throws(() => build({ messages, web_search_options: {} }), badRequest('web_search_options'));
    assert.throws(() => build({ messages, service_tier: 'flex' }), badRequest('service_tier'));
    assert.throws(() => build({ messages, tools: [weatherTool, { type: 'openrouter:web_search' }] }), badRequest('tools[1]'));
    // Harmless values of the same parameters pass.
    assert.doesNotThrow(() => build({ messages, parallel_tool_calls: false, modalities: ['text'], service_tier: 'auto' }));
  });

  it('with drop_params they are dropped and the rest is sent', () => {
    const body = build(
      {
        messages: [{ role: 'user', content: 'x' }],
        logit_bias: { '1': 5 },
        tools: [weatherTool],
        parallel_tool_calls: false,
        service_tier: 'priority',
        temperature: 1,
      },
      'gemini-2.5-flash',
      { ...target, dropParams: true },
    );
    assert.deepEqual(body.generationConfig, { temperature: 1 });
    assert.deepEqual(Object.keys(body), ['contents', 'tools', 'generationConfig']);
  });
});

/** Recorded request bodies carry the OpenAPI-style schema (`type: "STRING"`); ours is JSON Schema. */
function jsonSchemaOf(openApi: unknown): unknown {
  if (Array.isArray(openApi)) return openApi.map(jsonSchemaOf);
  if (!openApi || typeof openApi !== 'object') return openApi;
  return Object.fromEntries(Object.entries(openApi).map(([k, v]) => [k, k === 'type' && typeof v === 'string' ? v.toLowerCase() : jsonSchemaOf(v)]));
}

/**
 * The fields that matter, made comparable: the system instruction's (ignored) role and a
 * function response's payload shape are each client's own convention; ids only when both have them.
 */
function comparable(body: Record<string, any>, options: { ids: boolean }): Record<string, any> {
  const out = structuredClone(body);
  if (out.systemInstruction) delete out.systemInstruction.role;
  for (const content of out.contents) {
    for (const part of content.parts) {
      if (part.functionCall && !options.ids) delete part.functionCall.id;
      if (part.functionResponse) {
        if (!options.ids) delete part.functionResponse.id;
        part.functionResponse.response = '<payload>';
      }
    }
  }
  for (const tool of out.tools ?? []) {
    for (const f of tool.functionDeclarations) {
      if (f.parameters) {
        f.parametersJsonSchema = jsonSchemaOf(f.parameters);
        delete f.parameters;
      }
    }
  }
  return out;
}

const recorded = (name: string) => JSON.parse(readFixture(`gemini/${name}.request.json`).toString('utf8')) as Record<string, any>;
const capitalTools = [
  {
    type: 'function',
    function: {
      name: 'get_capital',
      description: 'Get the capital of a country.',
      parameters: { type: 'object', properties: { country: { type: 'string', description: 'The country name.' } }, required: ['country'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'get_temperature',
      description: 'Get the temperature in a city.',
      parameters: { type: 'object', properties: { city: { type: 'string', description: 'The city name.' } }, required: ['city'] },
    },
  },
];

describe('buildGoogleRequest matches the recorded requests', () => {
  it('text-2.0-flash: system instruction and temperature', () => {
    const body = build(
      {
        messages: [
          { role: 'system', content: 'You are a helpful chatbot.' },
          { role: 'user', content: 'What is the capital of France?' },
        ],
        temperature: 0,
      },
      'gemini-2.0-flash-exp',
    );
    assert.deepEqual(comparable(body, { ids: true }), comparable(recorded('text-2.0-flash'), { ids: true }));
  });

  for (const name of ['text-2.5-flash', 'vertex-text-2.5-flash']) {
    it(`${name}: one user message, nothing else`, () => {
      assert.deepEqual(build({ messages: [{ role: 'user', content: 'Count from 1 to 3' }] }), recorded(name));
    });
  }

  it('thoughts-token-accounting-2.5-flash: one user message', () => {
    assert.deepEqual(
      build({ messages: [{ role: 'user', content: 'What is 2+2? Think step by step.' }] }),
      recorded('thoughts-token-accounting-2.5-flash'),
    );
  });

  it('function-call-2.0-flash: tools as function declarations', () => {
    const body = build(
      {
        messages: [
          { role: 'system', content: 'You are a helpful chatbot.' },
          { role: 'user', content: 'What is the temperature of the capital of France?' },
        ],
        tools: capitalTools,
      },
      'gemini-2.0-flash',
    );
    assert.deepEqual(comparable(body, { ids: true }), comparable(recorded('function-call-2.0-flash'), { ids: true }));
  });

  it('function-call-thought-signature-2.5-flash: one tool', () => {
    const body = build({ messages: [{ role: 'user', content: "What's the weather in Berlin? (52.5200, 13.4050)" }], tools: [weatherTool] });
    assert.deepEqual(comparable(body, { ids: true }), comparable(recorded('function-call-thought-signature-2.5-flash'), { ids: true }));
  });

  it('thinking-2.5-pro: thought summaries asked for', () => {
    const body = build(
      {
        messages: [
          { role: 'system', content: 'You are a helpful assistant.' },
          { role: 'user', content: 'How do I cross the street?' },
        ],
        tools: [{ type: 'function', function: { name: 'dummy', description: '', parameters: { type: 'object', properties: {} } } }],
        reasoning_effort: 'medium',
      },
      'gemini-2.5-pro',
    );
    // The recording let the model pick its budget; reasoning_effort always names one.
    assert.deepEqual((body.generationConfig as Record<string, any>).thinkingConfig, { thinkingBudget: 8192, includeThoughts: true });
    delete (body.generationConfig as Record<string, any>).thinkingConfig.thinkingBudget;
    assert.deepEqual(comparable(body, { ids: true }), comparable(recorded('thinking-2.5-pro'), { ids: true }));
  });

  it('text-after-function-response-2.0-flash: two call/response rounds, ids kept', () => {
    const body = build(
      {
        messages: [
          { role: 'system', content: 'You are a helpful chatbot.' },
          { role: 'user', content: 'What is the temperature of the capital of France?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'pyd_ai_0e1a07b3c2b64d2ab3ad2efbe18e1b97',
                type: 'function',
                function: { name: 'get_capital', arguments: '{"country": "France"}' },
              },
            ],
          },
          { role: 'tool', tool_call_id: 'pyd_ai_0e1a07b3c2b64d2ab3ad2efbe18e1b97', content: 'Paris' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'pyd_ai_98b25d994c5648df82f683188629229d',
                type: 'function',
                function: { name: 'get_temperature', arguments: '{"city": "Paris"}' },
              },
            ],
          },
          { role: 'tool', tool_call_id: 'pyd_ai_98b25d994c5648df82f683188629229d', content: '30°C' },
        ],
        tools: capitalTools,
      },
      'gemini-2.0-flash',
    );
    assert.deepEqual(comparable(body, { ids: true }), comparable(recorded('text-after-function-response-2.0-flash'), { ids: true }));
    const responses = (body.contents as { parts: { functionResponse?: { response: unknown } }[] }[])
      .flatMap((c) => c.parts)
      .filter((p) => p.functionResponse);
    assert.deepEqual(
      responses.map((p) => p.functionResponse?.response),
      [{ output: 'Paris' }, { output: '30°C' }],
    );
  });

  it('text-after-function-response-2.5-flash: the signature streamed back in the previous answer returns on its call', () => {
    // What the client received for the first turn (the recorded answer), sent back as the assistant message.
    const decoder = createGeminiStreamDecoder({ provider: 'google' });
    const first = geminiStreamBody('gemini/function-call-thought-signature-2.5-flash.sse');
    const answer = assemble([...decoder.push(first), ...decoder.end()]).choices[0];
    assert.ok(answer.reasoningSignature);
    const body = build({
      messages: [
        { role: 'user', content: "What's the weather in Berlin? (52.5200, 13.4050)" },
        {
          role: 'assistant',
          content: answer.text,
          reasoning_signature: answer.reasoningSignature,
          tool_calls: answer.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
        },
        { role: 'tool', tool_call_id: answer.toolCalls[0].id, content: 'Current weather at 52.5200, 13.4050: 15°C, Wind: 10 km/h' },
      ],
      tools: [weatherTool],
    });
    assert.deepEqual(comparable(body, { ids: false }), comparable(recorded('text-after-function-response-2.5-flash'), { ids: false }));
  });
});
