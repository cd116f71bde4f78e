import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chatStream, DONE, role, text, violations } from '../../../test/helpers/check-streams.ts';
import { createStreamChecker } from './check-stream.ts';

describe('the SSE reader of sluice check', () => {
  it('skips `: heartbeat` comments and keeps `id:` lines, so resumable streams conform', () => {
    const withIds = chatStream().map((f, i) => `id: ${i + 1}\n${f}`);
    assert.deepEqual(violations([': heartbeat\n\n', ...withIds.slice(0, 2), ': heartbeat\n\n', ...withIds.slice(2)]), []);
  });

  it('a line that is no SSE field is a violation at the frame it breaks', () => {
    assert.deepEqual(violations([role(), 'hello there\n', text('x'), DONE]), ['2:sse/syntax', 'end:chat/finish-once']);
  });

  it('a last frame without its blank line is read, and reported as cut', () => {
    const body = chatStream().join('').replace(/\n\n$/, '\n');
    assert.deepEqual(violations(body), ['6:sse/unterminated']);
  });

  it('gives the same report however the bytes are split, a UTF-8 character included', () => {
    const body = Buffer.from([role(), text('héllo ✓'), 'not sse\n', DONE].join(''));
    const whole = createStreamChecker();
    whole.push(body);
    const expected = whole.end();
    for (let cut = 1; cut < body.length; cut += 7) {
      const split = createStreamChecker();
      split.push(body.subarray(0, cut));
      split.push(body.subarray(cut));
      assert.deepEqual(split.end(), expected, `split at ${cut}`);
    }
  });
});
