import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mapGeminiFinishReason } from './finish-reason.ts';

describe('mapGeminiFinishReason', () => {
  it('maps every documented reason', () => {
    const table: [string, boolean, string][] = [
      ['STOP', false, 'stop'],
      ['STOP', true, 'tool_calls'],
      ['MAX_TOKENS', false, 'length'],
      ['MAX_TOKENS', true, 'length'],
      ['SAFETY', false, 'content_filter'],
      ['RECITATION', false, 'content_filter'],
      ['PROHIBITED_CONTENT', false, 'content_filter'],
      ['BLOCKLIST', false, 'content_filter'],
      ['SPII', false, 'content_filter'],
      ['IMAGE_SAFETY', false, 'content_filter'],
      ['IMAGE_PROHIBITED_CONTENT', false, 'content_filter'],
      ['IMAGE_RECITATION', false, 'content_filter'],
      ['LANGUAGE', false, 'stop'],
      ['OTHER', false, 'stop'],
      ['MALFORMED_FUNCTION_CALL', true, 'stop'],
      ['FINISH_REASON_UNSPECIFIED', false, 'stop'],
      ['SOMETHING_NEW', false, 'stop'],
    ];
    assert.deepEqual(
      table.map(([raw, sawCall]) => [raw, sawCall, mapGeminiFinishReason(raw, sawCall)]),
      table,
    );
  });
});
