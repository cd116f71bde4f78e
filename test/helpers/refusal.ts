import assert from 'node:assert/strict';
import { GatewayError } from '../../src/errors/gateway-error.ts';

/** The GatewayError `action` throws; the test fails if it throws none, or something else. */
export function refusalOf(action: () => unknown): GatewayError {
  try {
    action();
  } catch (err) {
    assert.ok(err instanceof GatewayError, String(err));
    return err;
  }
  assert.fail('expected a refusal');
}
