import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { claudeHasNativeJsonSchema, RESPONSE_FORMAT_TOOL, rejectReservedToolName, responseFormatTool } from './response-format-tool.ts';

const user = [{ role: 'user' as const, content: 'hi' }];

describe('responseFormatTool', () => {
  it('is undefined for text (or no format)', () => {
    assert.equal(responseFormatTool({ model: 'm', messages: user }), undefined);
    assert.equal(responseFormatTool({ model: 'm', messages: user, response_format: { type: 'text' } }), undefined);
  });

  it('takes any object for json_object', () => {
    const tool = responseFormatTool({ model: 'm', messages: user, response_format: { type: 'json_object' } });
    assert.equal(tool?.name, RESPONSE_FORMAT_TOOL);
    assert.deepEqual(tool?.schema, { type: 'object' });
  });

  it("takes the client's schema, and names and describes the answer, for json_schema", () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const tool = responseFormatTool({
      model: 'm',
      messages: user,
      response_format: { type: 'json_schema', json_schema: { name: 'place', description: 'Where it is', schema, strict: true } },
    });
    assert.equal(tool?.schema, schema);
    assert.match(tool!.description, /place: Where it is$/);
  });
});

describe('rejectReservedToolName', () => {
  it("refuses a client tool named like sluice's, naming it", () => {
    const tools = [
      { type: 'function' as const, function: { name: 'ok' } },
      { type: 'function' as const, function: { name: RESPONSE_FORMAT_TOOL } },
    ];
    assert.throws(
      () => rejectReservedToolName({ model: 'm', messages: user, tools }),
      (e: { param?: string; status?: number }) => e.status === 400 && e.param === 'tools[1].function.name',
    );
    rejectReservedToolName({ model: 'm', messages: user, tools: tools.slice(0, 1) });
  });
});

describe('claudeHasNativeJsonSchema', () => {
  it('is true from Claude 4.5 on, direct and on Bedrock', () => {
    for (const id of [
      'claude-sonnet-4-5-20250929',
      'claude-haiku-4-5',
      'claude-opus-4-6',
      'claude-opus-5',
      'claude-sonnet-5-5',
      'us.anthropic.claude-haiku-4-5-20251001-v1:0',
      'anthropic.claude-opus-4-5-20251101-v1:0',
    ]) {
      assert.equal(claudeHasNativeJsonSchema(id), true, id);
    }
  });

  it('is false before 4.5, for a date read as no minor version, and for ids without a version', () => {
    for (const id of [
      'claude-3-7-sonnet-latest',
      'claude-3-5-haiku-20241022',
      'claude-sonnet-4-20250514',
      'claude-opus-4-1-20250805',
      'anthropic.claude-3-haiku-20240307-v1:0',
      'claude-mythos-preview',
      'meta.llama3-70b-instruct-v1:0',
    ]) {
      assert.equal(claudeHasNativeJsonSchema(id), false, id);
    }
  });
});
