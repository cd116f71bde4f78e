import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { anthropicBatchUsage, openAIBatchUsage } from './batch-usage.ts';

const openAILine = (model: string, usage: Record<string, unknown>, status = 200) =>
  JSON.stringify({ id: 'batch_req_1', custom_id: 'r', response: { status_code: status, request_id: 'req', body: { model, usage } }, error: null });

describe('the usage in an OpenAI batch output file', () => {
  it('sums chat completions per model, cached and reasoning tokens included', () => {
    const jsonl = [
      openAILine('gpt-4o-mini', { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, prompt_tokens_details: { cached_tokens: 50 } }),
      openAILine('gpt-4o-mini', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, completion_tokens_details: { reasoning_tokens: 3 } }),
      openAILine('gpt-4o', { prompt_tokens: 7, completion_tokens: 1, total_tokens: 8 }),
    ].join('\n');
    assert.deepEqual(
      openAIBatchUsage(jsonl).map(({ model, requests, usage }) => [
        model,
        requests,
        usage.inputTokens,
        usage.outputTokens,
        usage.cachedInputTokens,
        usage.reasoningTokens,
      ]),
      [
        ['gpt-4o-mini', 2, 110, 25, 50, 3],
        ['gpt-4o', 1, 7, 1, undefined, undefined],
      ],
    );
  });

  it("reads a Responses body's usage (input_tokens…) and an embeddings body's (prompt_tokens only)", () => {
    const jsonl = [
      openAILine('gpt-5', {
        input_tokens: 30,
        output_tokens: 9,
        input_tokens_details: { cached_tokens: 10 },
        output_tokens_details: { reasoning_tokens: 4 },
      }),
      openAILine('text-embedding-3-small', { prompt_tokens: 12, total_tokens: 12 }),
    ].join('\n');
    const [responses, embeddings] = openAIBatchUsage(jsonl);
    assert.deepEqual(
      [responses.usage.inputTokens, responses.usage.outputTokens, responses.usage.cachedInputTokens, responses.usage.reasoningTokens],
      [30, 9, 10, 4],
    );
    assert.deepEqual([embeddings.usage.inputTokens, embeddings.usage.outputTokens], [12, 0]);
  });

  it('counts nothing of a failed request, a line without usage, a line that is not JSON, a blank line', () => {
    const jsonl = [
      JSON.stringify({ custom_id: 'x', response: null, error: { code: 'batch_expired', message: 'expired' } }),
      openAILine('gpt-4o', { prompt_tokens: 'many' }).replace('"usage":{"prompt_tokens":"many"}', '"usage":null'),
      'not json',
      '',
      '[1, 2]',
    ].join('\n');
    assert.deepEqual(openAIBatchUsage(jsonl), []);
  });
});

describe("the usage in Anthropic's Message Batch results", () => {
  const result = (type: string, usage?: Record<string, number>) =>
    JSON.stringify({ custom_id: 'r', result: type === 'succeeded' ? { type, message: { model: 'claude-haiku-4-5', usage } } : { type } });

  it('sums succeeded results, cache reads and writes added to the input as sluice counts it', () => {
    const jsonl = [
      result('succeeded', { input_tokens: 100, output_tokens: 10, cache_read_input_tokens: 40, cache_creation_input_tokens: 5 }),
      result('succeeded', { input_tokens: 1, output_tokens: 2 }),
      result('errored'),
      result('canceled'),
      result('expired'),
    ].join('\n');
    const [sum] = anthropicBatchUsage(jsonl);
    assert.deepEqual(
      [sum.model, sum.requests, sum.usage.inputTokens, sum.usage.cachedInputTokens, sum.usage.cacheWriteTokens, sum.usage.outputTokens],
      ['claude-haiku-4-5', 2, 146, 40, 5, 12],
    );
  });
});
