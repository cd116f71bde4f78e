import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toUtf8 } from '@smithy/util-utf8';
import { assemble } from '../../protocol/canonical/assemble.ts';
import {
  bedrockBody,
  eventMessage,
  eventStreamMessages,
  exceptionMessage,
  expectedBedrockEvents,
  expectedBedrockMessages,
  reencodedBody,
} from '../../../test/helpers/bedrock-fixtures.ts';
import { decodeAll } from '../../../test/helpers/decode.ts';
import { splitRandomly } from '../../../test/helpers/fake-upstream.ts';
import { listFixtures } from '../../../test/helpers/fixtures.ts';
import { RESPONSE_FORMAT_TOOL } from '../response-format-tool.ts';
import { decodeBedrockResponse } from './decode-response.ts';
import { createBedrockStreamDecoder } from './decode-stream.ts';

/** The body Bedrock sent: `.b64` as recorded, the decoded `.jsonl` framed back with the codec. */
const bodyOf = (name: string) => (name.endsWith('.jsonl') ? reencodedBody(name) : bedrockBody(name));

const decode = (pieces: Uint8Array[]) => decodeAll(createBedrockStreamDecoder('bedrock'), pieces);

const recordings = listFixtures('bedrock', ['.b64', '.jsonl']).filter((n) => !n.includes('invoke-stream'));

describe('bedrock eventstream decoder on the recordings', () => {
  it('has an expected event list for every ConverseStream recording', () => {
    assert.deepEqual(recordings, Object.keys(expectedBedrockEvents).sort());
  });

  for (const name of recordings) {
    it(`${name}: decodes to the whole expected event list and message`, () => {
      const events = decode([bodyOf(name)]);
      assert.deepEqual(events, expectedBedrockEvents[name]);
      const message = assemble(events);
      const want = expectedBedrockMessages[name];
      const choice = message.choices[0];
      assert.equal(message.choices.length, 1);
      assert.equal(choice.text, want.text);
      assert.equal(choice.reasoning, want.reasoning);
      assert.equal(choice.reasoningSignature, want.reasoningSignature);
      assert.deepEqual(choice.toolCalls, want.toolCalls);
      assert.equal(choice.finishReason, want.finishReason);
      assert.deepEqual(message.usage, want.usage);
      assert.equal(message.error, null);
    });

    it(`${name}: 20 seeded random splits into reads give the identical list`, () => {
      const body = bodyOf(name);
      for (let seed = 1; seed <= 20; seed++) {
        assert.deepEqual(decode(splitRandomly(body, seed, 48)), expectedBedrockEvents[name], `seed ${seed}`);
      }
    });
  }

  it('one byte per read still decodes the same', () => {
    const name = 'bedrock/converse-tool-use-claude3-sonnet.b64';
    const body = bedrockBody(name);
    assert.deepEqual(decode([...body].map((b) => Uint8Array.of(b))), expectedBedrockEvents[name]);
  });

  it('frames InvokeModelWithResponseStream with the same codec (chunk events holding Anthropic events)', () => {
    const messages = eventStreamMessages(bedrockBody('bedrock/invoke-stream-claude3-sonnet.b64'));
    const inner = messages.map((m) => {
      assert.equal(m.headers[':event-type'].value, 'chunk');
      const { bytes } = JSON.parse(toUtf8(m.body)) as { bytes: string };
      return JSON.parse(Buffer.from(bytes, 'base64').toString('utf8')) as { type: string; delta?: { text?: string } };
    });
    assert.deepEqual(
      inner.map((e) => e.type),
      [
        'message_start',
        'content_block_start',
        ...Array<string>(18).fill('content_block_delta'),
        'content_block_stop',
        'message_delta',
        'message_stop',
      ],
    );
    assert.equal(inner.map((e) => e.delta?.text ?? '').join(''), 'Why did the distributed tracing span cross the road? To get to the other service!');
  });
});

describe('bedrock eventstream decoder failures', () => {
  const opening = [
    eventMessage('messageStart', { role: 'assistant' }),
    eventMessage('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hi' } }),
  ];

  it('an exception message is an error event with the status it stands for, and ends the stream', () => {
    const events = decode([
      ...opening,
      exceptionMessage('throttlingException', 'Too many requests, please wait.'),
      eventMessage('messageStop', { stopReason: 'end_turn' }),
    ]);
    assert.deepEqual(events.slice(0, 2), [{ type: 'start' }, { type: 'text', choice: 0, text: 'Hi' }]);
    assert.equal(events.length, 3);
    const last = events[2];
    assert.equal(last.type, 'error');
    assert.equal(last.type === 'error' && last.error.status, 429);
    assert.equal(last.type === 'error' && last.error.message, 'Too many requests, please wait.');
    assert.deepEqual(last.type === 'error' && [last.error.code, last.error.upstreamType], ['rate_limit_exceeded', 'throttlingException']);
  });

  it('a body that ends inside a message is an error event at end()', () => {
    const whole = Buffer.concat(opening);
    const decoder = createBedrockStreamDecoder('bedrock');
    const events = decoder.push(whole.subarray(0, whole.length - 5));
    assert.deepEqual(events, [{ type: 'start' }]);
    const [error, ...rest] = decoder.end();
    assert.deepEqual(rest, []);
    assert.equal(error.type === 'error' && error.error.code, 'upstream_malformed_stream');
    assert.match(error.type === 'error' ? error.error.message : '', /ended inside an eventstream message \(\d+ bytes left\)/);
  });

  it('regression: a message in many small reads is joined once it is whole, and a cut one counts every byte read', () => {
    // Each read used to copy the whole pending message: quadratic in the reads of one message.
    const whole = Buffer.concat(opening);
    const bytewise = decode([...whole].map((b) => new Uint8Array([b])));
    assert.deepEqual(bytewise, decode([whole]));
    const decoder = createBedrockStreamDecoder('bedrock');
    const cut = whole.subarray(0, whole.length - 5);
    for (let at = 0; at < cut.length; at += 3) decoder.push(cut.subarray(at, at + 3));
    const [error] = decoder.end();
    const left = cut.length - opening[0].length;
    assert.match(error.type === 'error' ? error.error.message : '', new RegExp(`\\(${left} bytes left\\)`));
  });

  it('a corrupted message fails the CRC check: error event, the rest is ignored', () => {
    const bad = Buffer.from(opening[1]);
    bad[bad.length - 6] ^= 0xff; // a payload byte
    const events = decode([opening[0], bad, eventMessage('messageStop', { stopReason: 'end_turn' })]);
    assert.equal(events.length, 2);
    assert.deepEqual(events[0], { type: 'start' });
    assert.equal(events[1].type === 'error' && events[1].error.code, 'upstream_malformed_stream');
    assert.match(events[1].type === 'error' ? events[1].error.message : '', /checksum/);
  });

  it('bytes that are not an eventstream (an HTML error page) are an error at once', () => {
    const events = decode([Buffer.from('<html><body>Bad Gateway</body></html>')]);
    assert.equal(events.length, 1);
    assert.match(events[0].type === 'error' ? events[0].error.message : '', /out of range/);
  });
});

describe('bedrock eventstream decoder: the forced tool of a JSON response format', () => {
  /**
   * converse-tool-use-claude3-sonnet.b64 as the answer tool's turn: the call renamed, and the text
   * before it left out (a forced tool choice gets no preamble), framed again with the codec.
   */
  function answerTurn(): Buffer {
    const messages = eventStreamMessages(bedrockBody('bedrock/converse-tool-use-claude3-sonnet.b64'));
    const kept = messages.flatMap((m) => {
      const type = String(m.headers[':event-type']?.value);
      const payload = JSON.parse(toUtf8(m.body)) as { contentBlockIndex?: number; start?: { toolUse?: { name: string } } };
      if (payload.contentBlockIndex === 0) return [];
      if (payload.start?.toolUse) payload.start.toolUse.name = RESPONSE_FORMAT_TOOL;
      return [eventMessage(type, payload)];
    });
    return Buffer.concat(kept);
  }

  it('streams the tool input as text deltas and finishes with stop', () => {
    const body = answerTurn();
    for (const seed of [1, 2, 3]) {
      const events = decode(splitRandomly(body, seed, 40));
      assert.equal(
        events.some((e) => e.type === 'tool-call-start' || e.type === 'tool-call-delta'),
        false,
      );
      const message = assemble(events).choices[0];
      assert.equal(message.text, '{"location": "Barcelona"}');
      assert.deepEqual(message.toolCalls, []);
      assert.equal(message.finishReason, 'stop');
    }
  });

  it('the non-stream decoder gives the same answer', () => {
    const events = decodeBedrockResponse(
      {
        output: {
          message: { role: 'assistant', content: [{ toolUse: { toolUseId: 't', name: RESPONSE_FORMAT_TOOL, input: { location: 'Barcelona' } } }] },
        },
        stopReason: 'tool_use',
        usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 },
      },
      'bedrock',
    );
    const message = assemble(events).choices[0];
    assert.equal(message.text, '{"location":"Barcelona"}');
    assert.equal(message.finishReason, 'stop');
  });
});
