import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import { parseChatRequest } from '../../surfaces/chat/parse-request.ts';
import { chatToCanonical } from '../../surfaces/chat/to-canonical.ts';
import { convertTools } from './convert-tools.ts';
import { unsupportedParams } from './unsupported.ts';

const tools = [
  {
    type: 'function',
    function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
  },
  { type: 'function', function: { name: 'now' } },
];
const request = (extra: Record<string, unknown>) =>
  chatToCanonical(parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools, ...extra }));

describe('anthropic tool conversion', () => {
  it('refuses a hosted tool (another upstream runs it) with a 400 naming it, or drops it under drop_params', () => {
    const hosted = chatToCanonical(
      parseChatRequest({
        model: 'm',
        messages: [{ role: 'user', content: 'x' }],
        tools: [tools[1], { type: 'openrouter:web_search', parameters: { max_uses: 1 } }],
      }),
    );
    assert.throws(
      () => convertTools(hosted, 'claude-sonnet-4-5', false, unsupportedParams(false)),
      (err: unknown) => err instanceof GatewayError && err.status === 400 && err.param === 'tools[1]' && /openrouter:web_search/.test(err.message),
    );
    assert.deepEqual(convertTools(hosted, 'claude-sonnet-4-5', false, unsupportedParams(true)), {
      tools: [{ name: 'now', input_schema: { type: 'object', properties: {} } }],
    });
  });

  it("passes a tool's strict: true on as strict tool use where the model has it, and leaves it out for older models", () => {
    const strict = request({ tools: [{ type: 'function', function: { name: 'now', strict: true, parameters: { type: 'object' } } }] });
    const strictTool = { name: 'now', input_schema: { type: 'object' }, strict: true };
    assert.deepEqual(convertTools(strict, 'claude-sonnet-4-5-20250929', false, unsupportedParams(false)).tools, [strictTool]);
    assert.deepEqual(convertTools(strict, 'claude-opus-4-6', false, unsupportedParams(false)).tools, [strictTool]);
    assert.deepEqual(convertTools(strict, 'claude-3-7-sonnet-latest', false, unsupportedParams(false)).tools, [
      { name: 'now', input_schema: { type: 'object' } },
    ]);
  });

  it('maps definitions, with an empty object schema for a tool without parameters', () => {
    assert.deepEqual(convertTools(request({}), 'claude-sonnet-4-5', false, unsupportedParams(false)), {
      tools: [
        { name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
        { name: 'now', input_schema: { type: 'object', properties: {} } },
      ],
    });
  });

  it('maps every tool_choice, with parallel_tool_calls false on the choice', () => {
    const choice = (extra: Record<string, unknown>) => convertTools(request(extra), 'claude-sonnet-4-5', false, unsupportedParams(false)).tool_choice;
    assert.deepEqual(
      [
        choice({ tool_choice: 'auto' }),
        choice({ tool_choice: 'none', parallel_tool_calls: false }),
        choice({ tool_choice: 'required', parallel_tool_calls: false }),
        choice({ tool_choice: { type: 'function', function: { name: 'now' } } }),
        choice({ parallel_tool_calls: true }),
      ],
      [{ type: 'auto' }, { type: 'none' }, { type: 'any', disable_parallel_tool_use: true }, { type: 'tool', name: 'now' }, undefined],
    );
  });

  it('cannot force a tool while thinking: 400, or auto with drop_params', () => {
    assert.throws(
      () =>
        convertTools(request({ tool_choice: { type: 'function', function: { name: 'now' } } }), 'claude-sonnet-4-5', true, unsupportedParams(false)),
      (e: unknown) => e instanceof GatewayError && e.param === 'tool_choice',
    );
    const dropped = convertTools(
      request({ tool_choice: 'required', parallel_tool_calls: false }),
      'claude-sonnet-4-5',
      true,
      unsupportedParams(true),
    );
    assert.deepEqual(dropped.tool_choice, { type: 'auto', disable_parallel_tool_use: true });
  });
});
