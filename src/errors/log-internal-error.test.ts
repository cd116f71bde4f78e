import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toGatewayError } from './gateway-error.ts';
import { logInternalError } from './log-internal-error.ts';

describe('regression: a real internal error was not logged', () => {
  const collect = () => {
    const lines: string[] = [];
    return { lines, log: (line: string) => lines.push(line) };
  };

  it('logs the request id and the stack of the throw', () => {
    const { lines, log } = collect();
    const err = new TypeError("Cannot read properties of undefined (reading 'x')");
    logInternalError(log, 'req123', err);
    assert.equal(lines.length, 1);
    assert.ok(lines[0].startsWith("internal error in request req123: TypeError: Cannot read properties of undefined (reading 'x')\n    at "));
    assert.match(lines[0], /log-internal-error\.test\.ts/);
  });

  it('logs the original throw when given the internal_error that wraps it', () => {
    const { lines, log } = collect();
    const original = new RangeError('boom');
    const wrapped = toGatewayError(original);
    assert.equal(wrapped.code, 'internal_error');
    logInternalError(log, 'req9', wrapped);
    assert.ok(lines[0].startsWith('internal error in request req9: RangeError: boom\n'));
  });

  it('logs a thrown non-error as text', () => {
    const { lines, log } = collect();
    logInternalError(log, 'req1', 'a string');
    assert.deepEqual(lines, ['internal error in request req1: a string']);
  });
});
