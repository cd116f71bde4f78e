import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Accountant } from '../../accounting/accountant.ts';
import { PricingRegistry } from '../../accounting/pricing.ts';
import { createMessagesRelayDecoder } from '../../providers/anthropic/relay-messages.ts';
import { MessagesEventEncoder } from './encode-stream.ts';
import { MessagesRelaySurface } from './relay-surface.ts';

function relaySurface(): MessagesRelaySurface {
  const accountant = new Accountant({
    requestId: 'req_1',
    keyId: null,
    provider: 'anthropic',
    model: 'claude-haiku-4-5',
    requestedModel: 'anthropic/claude-haiku-4-5',
    surface: 'messages',
    streamed: true,
    request: { model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'Hi' }] },
    pricing: new PricingRegistry(),
    storeContentChars: 0,
  });
  return new MessagesRelaySurface(accountant, new MessagesEventEncoder({ id: 'msg_req_1', model: 'anthropic/claude-haiku-4-5' }));
}

/** Relays `body` through the Anthropic relay decoder into `surface`; returns what the client got. */
function relay(surface: MessagesRelaySurface, body: string): string {
  const decoder = createMessagesRelayDecoder();
  let out = '';
  for (const item of [...decoder.push(Buffer.from(body)), ...decoder.end()]) out += surface.encode(item);
  return out;
}

const frame = (type: string, data: string) => `event: ${type}\ndata: ${data}\n\n`;
const START = frame(
  'message_start',
  '{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1}}}',
);

describe('MessagesRelaySurface', () => {
  it('closes the block a budget stop cuts even when its start frame names the index before the type', () => {
    const surface = relaySurface();
    const body =
      START +
      frame('content_block_start', '{"index":1,"type":"content_block_start","content_block":{"type":"text","text":""}}') +
      frame('content_block_delta', '{"index":1,"type":"content_block_delta","delta":{"type":"text_delta","text":"Hi"}}');
    assert.equal(relay(surface, body), body);
    assert.equal(surface.stop(), frame('content_block_stop', '{"type":"content_block_stop","index":1}'));
  });

  it('starts the message a budget stop ends before any relayed frame started it, and leaves a closed block closed', () => {
    const surface = relaySurface();
    assert.match(surface.stop(), /^event: message_start\n/);
    const closed = relaySurface();
    relay(
      closed,
      START +
        frame('content_block_start', '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}') +
        frame('content_block_stop', '{"type":"content_block_stop","index":0}'),
    );
    assert.equal(closed.stop(), '');
  });

  it('is complete once message_stop is relayed, not before', () => {
    const surface = relaySurface();
    relay(surface, START + frame('message_delta', '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}'));
    assert.equal(surface.complete, false);
    relay(surface, frame('message_stop', '{"type":"message_stop"}'));
    assert.equal(surface.complete, true);
  });
});
