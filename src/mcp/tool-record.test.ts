import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MASTER } from '../admission/admission.ts';
import { errors } from '../errors/catalog.ts';
import { type ToolCallFacts, toolCallRecord } from './tool-record.ts';

const facts = (over: Partial<ToolCallFacts> = {}): ToolCallFacts => ({
  requestId: 'r1',
  caller: { ...MASTER, keyId: 'k1', projectId: 'p1' },
  startedAt: 1000,
  endedAt: 1250,
  server: 'files',
  tool: 'read',
  prefixed: 'files__read',
  arguments: '{"path":"é"}',
  result: '{"content":[]}',
  toolError: false,
  error: undefined,
  storeContentChars: 0,
  ...over,
});

describe('toolCallRecord', () => {
  it('records the server as provider, the tool as model, the bytes both ways and no content by default', () => {
    const record = toolCallRecord(facts());
    assert.equal(record.surface, 'mcp');
    assert.deepEqual([record.provider, record.model, record.requestedModel], ['files', 'read', 'files__read']);
    assert.deepEqual([record.keyId, record.projectId], ['k1', 'p1']);
    assert.deepEqual([record.bytesIn, record.bytesOut, record.latencyMs], [13, 14, 250]);
    assert.deepEqual([record.outcome, record.finishReason, record.prompt, record.completion], ['ok', 'stop', null, null]);
  });

  it('keeps the arguments and the result, capped, when content storing is on', () => {
    const record = toolCallRecord(facts({ storeContentChars: 5 }));
    assert.deepEqual([record.prompt, record.completion], ['{"pat', '{"con']);
  });

  it("records a refusal's code and a tool's own error apart", () => {
    const refused = toolCallRecord(facts({ error: errors.mcpToolNotAllowed('files__read'), result: undefined }));
    assert.deepEqual([refused.outcome, refused.errorCode, refused.bytesOut], ['error', 'mcp_tool_not_allowed', 0]);
    assert.equal(toolCallRecord(facts({ toolError: true })).finishReason, 'tool_error');
  });
});
