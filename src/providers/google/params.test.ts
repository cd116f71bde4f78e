import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import { paramPolicy } from './params.ts';

describe('paramPolicy', () => {
  it('answers 400 naming the parameter', () => {
    assert.throws(
      () => paramPolicy('google', false).unsupported('logit_bias', 'Gemini has no token bias'),
      (e: unknown) =>
        e instanceof GatewayError &&
        e.status === 400 &&
        e.param === 'logit_bias' &&
        e.message ===
          'google cannot honour `logit_bias`: Gemini has no token bias. Remove it, or set drop_params: true for this provider to have sluice drop it.',
    );
  });

  it('with drop_params the parameter is dropped silently', () => {
    assert.equal(paramPolicy('google', true).unsupported('logit_bias', 'Gemini has no token bias'), undefined);
  });
});
