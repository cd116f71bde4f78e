import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TargetParams } from '../config/schema.ts';
import type { ProviderAdapter } from '../providers/types.ts';
import type { Candidate } from './plan.ts';
import { relayedBodyFor } from './relayed-body.ts';

const candidate = (params: TargetParams | undefined): Candidate => ({
  target: { adapter: {} as ProviderAdapter, provider: 'anthropic', model: 'm', requested: 'route' },
  key: 'anthropic/m',
  weight: 1,
  ttftTimeoutMs: 0,
  answerTimeoutMs: 0,
  params,
  via: 'route',
});

describe('relayedBodyFor', () => {
  const body = { model: 'route', temperature: 1, max_tokens: 999, reasoning: { summary: 'auto' }, messages: [] };

  it('without params the body is the client’s, untouched', () => {
    assert.equal(relayedBodyFor(body, candidate(undefined), 'messages'), body);
  });

  it('Messages: temperature, top_p and either output limit as max_tokens; seed and reasoning_effort have no name there', () => {
    const params: TargetParams = { temperature: 0.1, top_p: 0.9, max_completion_tokens: 64, seed: 7, reasoning_effort: 'low' };
    assert.deepEqual(relayedBodyFor(body, candidate(params), 'messages'), {
      ...body,
      temperature: 0.1,
      top_p: 0.9,
      max_tokens: 64,
    });
  });

  it('Responses: the output limit as max_output_tokens, the effort into the client’s reasoning object', () => {
    const out = relayedBodyFor(body, candidate({ max_tokens: 32, reasoning_effort: 'high' }), 'responses');
    assert.deepEqual([out.max_output_tokens, out.max_tokens, out.reasoning], [32, 999, { summary: 'auto', effort: 'high' }]);
  });
});
