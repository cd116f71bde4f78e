import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import { parseChatRequest } from '../../surfaces/chat/parse-request.ts';
import { chatToCanonical } from '../../surfaces/chat/to-canonical.ts';
import { planTokens } from './thinking.ts';
import { unsupportedParams } from './unsupported.ts';

const plan = (extra: Record<string, unknown>, drop = false) =>
  planTokens(chatToCanonical(parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], ...extra })), unsupportedParams(drop));

describe('anthropic max_tokens and thinking budget', () => {
  it('defaults max_tokens to 4096 and passes the client limit through', () => {
    assert.deepEqual(plan({}), { maxTokens: 4096 });
    assert.deepEqual(plan({ reasoning_effort: 'none' }), { maxTokens: 4096 });
    assert.deepEqual(plan({ max_tokens: 100 }), { maxTokens: 100 });
    assert.deepEqual(plan({ max_tokens: 100, max_completion_tokens: 200 }), { maxTokens: 200 });
  });

  it('gives each effort its budget, with 4096 tokens for the answer on top when the client set no limit', () => {
    const efforts = ['minimal', 'low', 'medium', 'high', 'xhigh'];
    assert.deepEqual(
      efforts.map((reasoning_effort) => plan({ reasoning_effort })),
      [
        { maxTokens: 5120, budgetTokens: 1024 },
        { maxTokens: 8192, budgetTokens: 4096 },
        { maxTokens: 12288, budgetTokens: 8192 },
        { maxTokens: 20480, budgetTokens: 16384 },
        { maxTokens: 28672, budgetTokens: 24576 },
      ],
    );
  });

  it('keeps the budget below a client limit, and cannot think under 1025 tokens', () => {
    assert.deepEqual(plan({ reasoning_effort: 'high', max_completion_tokens: 32000 }), { maxTokens: 32000, budgetTokens: 16384 });
    assert.deepEqual(plan({ reasoning_effort: 'high', max_completion_tokens: 3000 }), { maxTokens: 3000, budgetTokens: 2999 });
    assert.deepEqual(plan({ reasoning_effort: 'minimal', max_tokens: 1025 }), { maxTokens: 1025, budgetTokens: 1024 });
    assert.throws(
      () => plan({ reasoning_effort: 'minimal', max_tokens: 1024 }),
      (e: unknown) => e instanceof GatewayError && e.status === 400 && e.param === 'max_tokens',
    );
    assert.deepEqual(plan({ reasoning_effort: 'minimal', max_tokens: 1024 }, true), { maxTokens: 1024 });
  });
});
