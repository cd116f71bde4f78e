import { EventStreamCodec, type Message, type MessageHeaders } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { CanonicalEvent } from '../../src/protocol/canonical/events.ts';
import type { FinishReason } from '../../src/protocol/canonical/finish-reason.ts';
import type { Usage } from '../../src/protocol/canonical/usage.ts';
import { readFixture } from './fixtures.ts';

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** The raw `application/vnd.amazon.eventstream` body of a `.b64` recording. */
export function bedrockBody(name: string): Buffer {
  return Buffer.from(readFixture(name).toString('utf8').trim(), 'base64');
}

/** The messages of an eventstream body, split by their length prelude and decoded by the codec. */
export function eventStreamMessages(body: Uint8Array): Message[] {
  const out: Message[] = [];
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  for (let offset = 0; offset < body.byteLength;) {
    const length = view.getUint32(offset, false);
    out.push(codec.decode(body.subarray(offset, offset + length)));
    offset += length;
  }
  return out;
}

const str = (value: string) => ({ type: 'string' as const, value });

function encode(headers: MessageHeaders, payload: unknown): Buffer {
  return Buffer.from(codec.encode({ headers, body: fromUtf8(JSON.stringify(payload)) }));
}

/** One ConverseStream event message, framed as Bedrock frames it. */
export function eventMessage(eventType: string, payload: unknown): Buffer {
  return encode({ ':event-type': str(eventType), ':content-type': str('application/json'), ':message-type': str('event') }, payload);
}

/** One exception message (e.g. `throttlingException`), as Bedrock sends a failure inside a 200 stream. */
export function exceptionMessage(exceptionType: string, message: string): Buffer {
  return encode({ ':exception-type': str(exceptionType), ':content-type': str('application/json'), ':message-type': str('exception') }, { message });
}

/** The events of a decoded `.jsonl` recording (`{"<eventType>": payload}` per line). */
export function decodedEvents(name: string): { type: string; payload: unknown }[] {
  return readFixture(name)
    .toString('utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [[type, payload]] = Object.entries(JSON.parse(line) as Record<string, unknown>);
      return { type, payload };
    });
}

/** A decoded `.jsonl` recording framed back into the eventstream body Bedrock sent. */
export function reencodedBody(name: string): Buffer {
  return Buffer.concat(decodedEvents(name).map((e) => eventMessage(e.type, e.payload)));
}

/** The thinking signatures of the two reasoning recordings (they travel back as reasoning_signature). */
export const SONNET4_SIGNATURE =
  'Eu0CCkgIBxABGAIqQJDccbDQkr81n7QjZ0Fi43umSvw0YvnGkMPEpaGAa2btYHyWw06KhwckvsnKzpKcxiRJT35meoG4/pdrTUiy2UISDPDaEWfOl3+HlRVsCxoMzfiqBp252RMvpmEyIjCbQ97Ac9Epkr5mgxeu1vGtJg+fDWIg0UnpMM8NYknhhvJmsXpYrfquwGL1ZnlBslUq0gHtbAAPwlWPmiQXU7gDQCDW9IdMVyw42b4f5MrAlpWkPWOJc9H+yYv0TpP/jY72SD1opqwkWnBgkzbi7A2jPmEFzIMQSO1KDXha5ADqQ3cLYMmVdNTSH9wlM7G7/JJ2/cqowqkwD6/q1AnYzcPte9iC67fY1LYN0NMCOSABFojP1rmkv9YBEulx5Y6eQpeVXBQiIqcGoCmWSumpGBskS1KxGerUmzUB0JmJnTENv4x3fSGSUSEPqMiz6Ebao8sVkb1wCWuZEXWJGtiQLMIm1o471iEYAQ==';
export const DECODED_SIGNATURE =
  'Ep0CCkgICxABGAIqQOWPB6/PmA5SW9jC6FvaNq3E+U9ev4FMWcFWuAho+VGLCtazKc5WDjQ5i0MuxsY0o5pKDSVWVKii8KJDusXH4eASDK7jyzuk8iij7fJNihoMxHO9haYzt48R36HVIjCb/EmIFrJLIXShqN6DN//T6vZBtO9qj1QhNWJa3CGm8VZoq80S2/Ok4U0aVaIDiZcqggHC2b8BHuv8BHZrmsR0wjU1ynansBGMdfjnG+iIv8R5lPpRmYGhSVwNybwP3aQZ6o8Dr48Rau8TJfdsArW+r7bvL7bPs4f5nnlp2vG7WkMzWwABHK3fdM44zZ1GZQaWyECNWR2GfY6dXiklo94vgpFTPuZ97mfiN3LY6uYyBwL8RkDaGAE=';

const start: CanonicalEvent = { type: 'start' };
const text = (t: string): CanonicalEvent => ({ type: 'text', choice: 0, text: t });
const think = (t: string): CanonicalEvent => ({ type: 'reasoning', choice: 0, text: t });
const signed = (signature: string): CanonicalEvent => ({ type: 'reasoning', choice: 0, text: '', signature });
const call = (index: number, id: string, name: string): CanonicalEvent => ({ type: 'tool-call-start', choice: 0, index, id, name });
const args = (index: number, a: string): CanonicalEvent => ({ type: 'tool-call-delta', choice: 0, index, arguments: a });
const finish = (reason: FinishReason, rawReason: string): CanonicalEvent => ({ type: 'finish', choice: 0, reason, rawReason });
const usage = (inputTokens: number, outputTokens: number): CanonicalEvent => ({
  type: 'usage',
  usage: { inputTokens, outputTokens, source: 'provider' },
});

/** Every ConverseStream recording and the whole canonical event list it decodes to, written out. */
export const expectedBedrockEvents: Record<string, CanonicalEvent[]> = {
  'bedrock/converse-reasoning-claude-sonnet4.b64': [
    start,
    think('The'),
    think(' user has'),
    think(' greeted me with'),
    think(' a simple "Hello".'),
    think(' I should respond in'),
    think(' a friendly and wel'),
    think('coming manner.'),
    think(' This is a'),
    think(' straightforward greeting'),
    think(','),
    think(" so I'll respond warm"),
    think('ly and ask'),
    think(' how I can help'),
    think(' them today.'),
    signed(SONNET4_SIGNATURE),
    text('Hello! It'),
    text("'s nice"),
    text(' to meet you.'),
    text(' How can I help'),
    text(' you today?'),
    finish('stop', 'end_turn'),
    usage(36, 73),
  ],
  'bedrock/converse-text-after-tool-nova-micro.b64': [
    start,
    text('The'),
    text(' current temperature in Paris, the'),
    text(' capital of France,'),
    text(' is 30°C'),
    text('.'),
    finish('stop', 'end_turn'),
    usage(577, 18),
  ],
  'bedrock/converse-text-nova-micro.b64': [
    start,
    text('The'),
    text(' capital of France is Paris.'),
    text(' Paris is not'),
    text(' only the capital city but'),
    text(' also the most'),
    text(' populous city in France'),
    text(', and'),
    text(' it is'),
    text(' a'),
    text(' major center'),
    text(' for'),
    text(' culture'),
    text(', commerce, fashion'),
    text(', and international diplomacy'),
    text('. Known'),
    text(' for its'),
    text(' historical'),
    text(' landmarks, such'),
    text(' as the Eiffel Tower, the'),
    text(' Louvre Museum, and Notre'),
    text('-Dame Cathedral'),
    text(', Paris is often'),
    text(' referred to as "'),
    text('The City of Light'),
    text('"'),
    text(' or "The'),
    text(' City'),
    text(' of Love'),
    text('."'),
    finish('stop', 'end_turn'),
    usage(13, 82),
  ],
  'bedrock/converse-text-nova2-lite.b64': [
    start,
    text('Sure'),
    text('! Here is'),
    text(' the count'),
    text(' from 1 to 3'),
    text(':\n\n1  \n'),
    text('2  \n3'),
    finish('stop', 'end_turn'),
    usage(53, 21),
  ],
  'bedrock/converse-tool-use-claude3-sonnet.b64': [
    start,
    text('Okay'),
    text(','),
    text(' let'),
    text(' me'),
    text(' check'),
    text(' the'),
    text(' weather'),
    text(' for'),
    text(' Barcelona'),
    text(' using'),
    text(' the'),
    text(' available'),
    text(' tool'),
    text(':'),
    call(0, 'tooluse_yypYDr71TwCwByoyao4-Vg', 'get_weather'),
    args(0, '{"locati'),
    args(0, 'on": "Bar'),
    args(0, 'ce'),
    args(0, 'lona"}'),
    finish('tool_calls', 'tool_use'),
    usage(236, 58),
  ],
  'bedrock/converse-tool-use-nova-micro.b64': [
    start,
    text('<thinking'),
    text('> To find'),
    text(' the temperature'),
    text(' of the capital of France,'),
    text(' I need to first'),
    text(' determine the capital'),
    text(' of France and'),
    text(' then get'),
    text(' the current'),
    text(' temperature in'),
    text(' that city. The'),
    text(' capital of France is Paris'),
    text('. I'),
    text(' will use'),
    text(' the "get_temperature"'),
    text(' tool to find the current temperature'),
    text(' in Paris.</'),
    text('thinking'),
    text('>\n'),
    call(0, 'tooluse_lAG_zP8QRHmSYOwZzzaCqA', 'get_temperature'),
    args(0, '{"city":"Paris"}'),
    finish('tool_calls', 'tool_use'),
    usage(471, 91),
  ],
  'bedrock/converse-reasoning-decoded.jsonl': [
    start,
    think('Let me count the r'),
    think('\'s in "'),
    think('strawberry":'),
    think('\n\ns-t-r-a'),
    think('-w-b-e-r'),
    think('-r-y\n\nr'),
    think(' appears at positions '),
    think('3, 8'),
    think(', and 9.\n\nSo there'),
    think(" are 3 r's."),
    signed(DECODED_SIGNATURE),
    text('There'),
    text(' are **3** r\'s in "'),
    text('strawberry":'),
    text('\n\n1'),
    text('. st'),
    text('**'),
    text('r**awbe'),
    text('**r****'),
    text('r**y'),
    finish('stop', 'end_turn'),
    usage(51, 94),
  ],
};

export interface ExpectedBedrockMessage {
  text: string | null;
  reasoning: string | null;
  reasoningSignature: string | null;
  toolCalls: { id: string; name: string; arguments: string }[];
  finishReason: FinishReason;
  usage: Usage;
}

const used = (inputTokens: number, outputTokens: number): Usage => ({ inputTokens, outputTokens, source: 'provider' });

/** What each recording assembles to: the whole message a client ends up with. */
export const expectedBedrockMessages: Record<string, ExpectedBedrockMessage> = {
  'bedrock/converse-reasoning-claude-sonnet4.b64': {
    text: "Hello! It's nice to meet you. How can I help you today?",
    reasoning:
      'The user has greeted me with a simple "Hello". I should respond in a friendly and welcoming manner. ' +
      "This is a straightforward greeting, so I'll respond warmly and ask how I can help them today.",
    reasoningSignature: SONNET4_SIGNATURE,
    toolCalls: [],
    finishReason: 'stop',
    usage: used(36, 73),
  },
  'bedrock/converse-text-after-tool-nova-micro.b64': {
    text: 'The current temperature in Paris, the capital of France, is 30°C.',
    reasoning: null,
    reasoningSignature: null,
    toolCalls: [],
    finishReason: 'stop',
    usage: used(577, 18),
  },
  'bedrock/converse-text-nova-micro.b64': {
    text:
      'The capital of France is Paris. Paris is not only the capital city but also the most populous city in France, ' +
      'and it is a major center for culture, commerce, fashion, and international diplomacy. Known for its historical ' +
      'landmarks, such as the Eiffel Tower, the Louvre Museum, and Notre-Dame Cathedral, Paris is often referred to as ' +
      '"The City of Light" or "The City of Love."',
    reasoning: null,
    reasoningSignature: null,
    toolCalls: [],
    finishReason: 'stop',
    usage: used(13, 82),
  },
  'bedrock/converse-text-nova2-lite.b64': {
    text: 'Sure! Here is the count from 1 to 3:\n\n1  \n2  \n3',
    reasoning: null,
    reasoningSignature: null,
    toolCalls: [],
    finishReason: 'stop',
    usage: used(53, 21),
  },
  'bedrock/converse-tool-use-claude3-sonnet.b64': {
    text: 'Okay, let me check the weather for Barcelona using the available tool:',
    reasoning: null,
    reasoningSignature: null,
    toolCalls: [{ id: 'tooluse_yypYDr71TwCwByoyao4-Vg', name: 'get_weather', arguments: '{"location": "Barcelona"}' }],
    finishReason: 'tool_calls',
    usage: used(236, 58),
  },
  'bedrock/converse-tool-use-nova-micro.b64': {
    // Nova (v1) writes its chain of thought as <thinking> tags inside the text; it stays text.
    text:
      '<thinking> To find the temperature of the capital of France, I need to first determine the capital of France ' +
      'and then get the current temperature in that city. The capital of France is Paris. I will use the ' +
      '"get_temperature" tool to find the current temperature in Paris.</thinking>\n',
    reasoning: null,
    reasoningSignature: null,
    toolCalls: [{ id: 'tooluse_lAG_zP8QRHmSYOwZzzaCqA', name: 'get_temperature', arguments: '{"city":"Paris"}' }],
    finishReason: 'tool_calls',
    usage: used(471, 91),
  },
  'bedrock/converse-reasoning-decoded.jsonl': {
    text: 'There are **3** r\'s in "strawberry":\n\n1. st**r**awbe**r****r**y',
    reasoning: 'Let me count the r\'s in "strawberry":\n\ns-t-r-a-w-b-e-r-r-y\n\nr appears at positions 3, 8, and 9.\n\nSo there are 3 r\'s.',
    reasoningSignature: DECODED_SIGNATURE,
    toolCalls: [],
    finishReason: 'stop',
    usage: used(51, 94),
  },
};
