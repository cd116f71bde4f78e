import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { CanonicalFunctionTool, CanonicalMessage } from '../../protocol/canonical/request.ts';
import { parseResponsesRequest } from './parse-request.ts';
import { responsesToCanonical } from './to-canonical.ts';
import { refuseUnhonoured } from './unhonoured.ts';

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
    it('a tool_choice naming a hosted tool, or allowing one', () => {
      rejects({ model: 'up/m', input: 'Go', tool_choice: { type: 'web_search_preview' } }, 'tool_choice', /web_search_preview/);
      rejects(
        {
          model: 'up/m',
          input: 'Go',
          tool_choice: {
            type: 'allowed_tools',
            mode: 'auto',
            tools: [
              { type: 'function', name: 'f' },
              { type: 'mcp', server_label: 's' },
            ],
          },
        },
        'tool_choice.tools[1].type',
        /Tool type 'mcp'/,
      );
    });
    it('an unknown field', () => {
      rejects({ model: 'up/m', input: 'Go', promt: { id: 'pmpt_1' } }, 'promt', /^Unsupported parameter: 'promt'\.$/);
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

/**
 * Every parameter of the Responses API, as the openai SDK declares them (ResponseCreateParamsBase
 * in node_modules/openai/resources/responses/responses.d.ts), with a value a client sends.
 */
const everyParameter: Record<string, unknown> = {
  access_programs: { cyber: 'standard' },
  background: false,
  context_management: null,
  conversation: null,
  image: { context_compression: 'auto' },
  include: ['reasoning.encrypted_content'],
  input: 'Go',
  instructions: 'Be brief.',
  max_output_tokens: 100,
  max_tool_calls: 2,
  metadata: { team: 'a' },
  model: 'up/m',
  moderation: null,
  parallel_tool_calls: true,
  previous_response_id: null,
  prompt: null,
  prompt_cache_key: 'tenant-1',
  prompt_cache_options: { ttl: '30m' },
  prompt_cache_retention: '24h',
  reasoning: { effort: 'low', summary: 'auto', generate_summary: null, context: 'auto', mode: 'standard' },
  safety_identifier: 'user-hash',
  service_tier: 'auto',
  store: false,
  stream: true,
  stream_options: { include_obfuscation: false },
  temperature: 1,
  text: { format: { type: 'text' }, verbosity: 'low' },
  tool_choice: 'auto',
  tools: [{ type: 'function', name: 'f', parameters: { type: 'object' }, strict: true }],
  top_logprobs: 3,
  top_p: 1,
  truncation: 'auto',
  user: 'u-1',
};

describe('every Responses API parameter', () => {
  it('the schema knows each one the openai SDK declares', () => {
    const declared = readFileSync(new URL('../../../node_modules/openai/resources/responses/responses.d.ts', import.meta.url), 'utf8');
    const base = /export interface ResponseCreateParamsBase \{([\s\S]*?)\n\}/.exec(declared)![1];
    const names = [...base.matchAll(/^ {4}([a-z_]+)\??:/gm)].map((m) => m[1]).sort();
    assert.deepEqual(Object.keys(everyParameter).sort(), names);
    parseResponsesRequest(everyParameter);
  });

  it('a function tool takes every field the SDK declares (FunctionTool); the ones sluice needs not are left out', () => {
    const declared = readFileSync(new URL('../../../node_modules/openai/resources/responses/responses.d.ts', import.meta.url), 'utf8');
    const body = /export interface FunctionTool \{([\s\S]*?)\n\}/.exec(declared)![1];
    const tool = {
      type: 'function',
      name: 'f',
      description: 'F.',
      parameters: { type: 'object' },
      strict: true,
      allowed_callers: ['direct'],
      async: false,
      defer_loading: true,
      output_schema: { type: 'string' },
    };
    assert.deepEqual(Object.keys(tool).sort(), [...body.matchAll(/^ {4}([a-z_]+)\??:/gm)].map((m) => m[1]).sort());
    assert.deepEqual(convert({ model: 'up/m', input: 'Go', tools: [tool] }).tools, [
      { type: 'function', function: { name: 'f', description: 'F.', parameters: { type: 'object' }, strict: true } },
    ]);
  });

  it("an image's `original` detail is the provider's default", () => {
    const chat = convert({
      model: 'up/m',
      input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://x/i.png', detail: 'original' }] }],
    });
    assert.deepEqual(chat.messages[0].content, [{ type: 'image_url', image_url: { url: 'https://x/i.png' } }]);
  });

  it('the hints reach an OpenAI-compatible upstream under their Chat Completions names; the rest changes nothing', () => {
    const chat = convert(everyParameter);
    assert.deepEqual(chat.extra, {
      prompt_cache_key: 'tenant-1',
      prompt_cache_retention: '24h',
      prompt_cache_options: { ttl: '30m' },
      safety_identifier: 'user-hash',
      verbosity: 'low',
    });
    // Logprobs only when the output is to include them.
    assert.equal(chat.logprobs, undefined);
    assert.equal(chat.top_logprobs, undefined);
    const withLogprobs = convert({ ...everyParameter, include: ['message.output_text.logprobs'] });
    assert.deepEqual([withLogprobs.logprobs, withLogprobs.top_logprobs], [true, 3]);
  });

  it('max_tool_calls: 0 is tool_choice none; allowed_tools offers the tools it names, in its mode', () => {
    const tools = [
      { type: 'function', name: 'a' },
      { type: 'function', name: 'b' },
    ];
    assert.equal(convert({ model: 'up/m', input: 'Go', tools, tool_choice: 'required', max_tool_calls: 0 }).tool_choice, 'none');
    const allowed = convert({
      model: 'up/m',
      input: 'Go',
      tools,
      tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'b' }] },
    });
    assert.deepEqual(
      allowed.tools?.map((t) => (t as CanonicalFunctionTool).function.name),
      ['b'],
    );
    assert.equal(allowed.tool_choice, 'required');
  });
});

describe('unhonoured: OpenAI services a translated target cannot give', () => {
  const refused = (extra: Record<string, unknown>, dropParams = false) => {
    try {
      refuseUnhonoured(parseResponsesRequest({ model: 'anthropic/x', input: 'Go', ...extra }), 'anthropic', dropParams);
      return null;
    } catch (err) {
      assert.ok(err instanceof GatewayError);
      assert.equal(err.status, 400);
      return err.param;
    }
  };

  it('a 400 naming each, unless drop_params', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ background: true }, 'background'],
      [{ conversation: 'conv_1' }, 'conversation'],
      [{ conversation: { id: 'conv_1' } }, 'conversation'],
      [{ prompt: { id: 'pmpt_1', version: '2' } }, 'prompt'],
      [{ moderation: { model: 'omni-moderation-latest' } }, 'moderation'],
      [{ context_management: [{ type: 'compaction', compact_threshold: 1000 }] }, 'context_management'],
      [{ access_programs: { cyber: 'daybreak_blue' } }, 'access_programs.cyber'],
    ];
    for (const [extra, param] of cases) {
      assert.equal(refused(extra), param, param);
      assert.equal(refused(extra, true), null, `${param} under drop_params`);
    }
  });

  it('their harmless values pass', () => {
    assert.equal(refused(everyParameter), null);
    assert.equal(refused({ background: null, context_management: [], access_programs: {} }), null);
  });
});
