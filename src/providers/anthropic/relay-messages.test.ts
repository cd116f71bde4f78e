import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { anthropicStreamBody } from '../../../test/helpers/anthropic-fixtures.ts';
import { splitRandomly } from '../../../test/helpers/fake-upstream.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import type { MessagesRelayItem } from '../types.ts';
import { createAnthropicStreamDecoder } from './decode-stream.ts';
import { createMessagesRelayDecoder } from './relay-messages.ts';

function relay(pieces: Buffer[]): MessagesRelayItem[] {
  const decoder = createMessagesRelayDecoder();
  return [...pieces.flatMap((p) => decoder.push(p)), ...decoder.end()];
}

const texts = (items: MessagesRelayItem[]) => items.flatMap((i) => ('text' in i ? [i.text] : []));
const events = (items: MessagesRelayItem[]) => items.flatMap((i) => ('event' in i ? [i.event] : []));

describe('the Messages relay decoder', () => {
  for (const name of ['anthropic/thinking-signature.sse', 'anthropic/parallel-tool-use.sse', 'anthropic/prompt-cache-read.sse']) {
    it(`passes ${name} on as whole frames, byte for byte, with the events the adapter decodes`, () => {
      const body = anthropicStreamBody(name);
      for (const seed of [1, 2, 3]) {
        const items = relay(splitRandomly(body, seed, 37));
        const out = texts(items);
        assert.equal(out.join(''), body.toString('utf8'));
        for (const text of out) assert.ok(text.endsWith('\n\n'), `a piece ends inside a frame: ${JSON.stringify(text.slice(-40))}`);
        const decoder = createAnthropicStreamDecoder();
        const want: CanonicalEvent[] = [...decoder.push(body), ...decoder.end()];
        assert.deepEqual(events(items), want);
      }
    });
  }

  it("marks an upstream error event as told, and a broken stream's error as not", () => {
    const told = relay([Buffer.from('event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n')]);
    const error = told.find((i) => 'event' in i && i.event.type === 'error');
    assert.ok(error && 'told' in error && error.told === true);
    const broken = relay([Buffer.from('event: message_start\ndata: {"type":"message_start","message":{}}\n\nHTTP/1.1 garbage\n\n')]);
    const failure = broken.find((i) => 'event' in i && i.event.type === 'error');
    assert.ok(failure && 'event' in failure && failure.event.type === 'error' && failure.event.error.code === 'upstream_malformed_stream');
    assert.equal('told' in failure && failure.told, false);
  });
});
