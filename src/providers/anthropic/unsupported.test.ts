import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import { unsupportedParams } from './unsupported.ts';

describe('unsupported parameters', () => {
  it('answers 400 naming the parameter, or lets it be dropped with drop_params', () => {
    assert.throws(
      () => unsupportedParams(false)('seed', 'anthropic has no seed.'),
      (e: unknown) => e instanceof GatewayError && e.status === 400 && e.param === 'seed' && e.message === 'anthropic has no seed.',
    );
    assert.equal(unsupportedParams(true)('seed', 'anthropic has no seed.'), undefined);
  });
});
