import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../errors/gateway-error.ts';
import { parseToolArguments } from './parse-tool-arguments.ts';

describe('parseToolArguments', () => {
  it('parses an object, and reads empty arguments as a call without any', () => {
    assert.deepEqual(parseToolArguments('{"city":"Paris"}', 'anthropic', 'p'), { city: 'Paris' });
    assert.deepEqual(parseToolArguments('  ', 'anthropic', 'p'), {});
  });

  it('answers 400 naming the field for anything that is not a JSON object', () => {
    for (const bad of ['{"city":', '[1,2]', '"text"', 'null', '42']) {
      assert.throws(
        () => parseToolArguments(bad, 'bedrock', 'messages[1].tool_calls[0].function.arguments'),
        (e: unknown) =>
          e instanceof GatewayError &&
          e.status === 400 &&
          e.param === 'messages[1].tool_calls[0].function.arguments' &&
          /sent to bedrock/.test(e.message),
        bad,
      );
    }
  });
});
