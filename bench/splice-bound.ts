/**
 * What splicing an OpenAI-compatible upstream's chunk bytes (swap the envelope's id and model,
 * drop vendor fields, leave the rest as it came) could save at most against sluice's decode and
 * re-encode (issue 15: "splice the bytes ... if the benchmark shows it pays"):
 * `npx node bench/splice-bound.ts [--streams 20000]`. Each side takes the bench's OpenAI stream
 * (upstream-frames.ts: a role chunk, then 20 text chunks, one per read) with the per-stream state
 * a request makes, in one process, alternating, and prints CPU per stream:
 * - `decode + encode`: what sluice does (the SSE decoder, canonical events, the chat surface and
 *   its accountant, the chunk encoder);
 * - `splice`: the framing, then per chunk what a splice could not skip, the text (the accountant
 *   counts it for an upstream that reports no usage, stores it, a budget watch prices it:
 *   text-only-chunk.ts reads it), the accountant's event, and the envelope swapped in the bytes;
 *   every other chunk also spliced, so this is a lower bound of a real splice's cost;
 * - `framing alone`: the SSE framing, the floor of any path that sends frames.
 * The difference between the first two is the most a splice could save a stream; the benchmark's
 * fast-mode CPU per stream (docs/benchmarks/results/) is what it is set against.
 */
import { parseArgs } from 'node:util';
import { STREAM_PROFILES } from '../src/protocol/stream-profiles.ts';
import { Accountant } from '../src/accounting/accountant.ts';
import { PricingRegistry } from '../src/accounting/pricing.ts';
import { ChatStreamSurface } from '../src/surfaces/chat/stream-surface.ts';
import { parseChatRequest } from '../src/surfaces/chat/parse-request.ts';
import { chatToCanonical } from '../src/surfaces/chat/to-canonical.ts';
import { createSseFramer } from '../src/protocol/sse/parse-upstream.ts';
import { createOpenAICompatibleFrameDecoder } from '../src/providers/openai-compatible/decode-stream.ts';
import { TextChunkReader } from '../src/providers/openai-compatible/text-only-chunk.ts';
import { createSseStreamDecoder } from '../src/providers/sse-decoder.ts';
import { scriptedStream } from './upstream-frames.ts';

const { values } = parseArgs({ options: { streams: { type: 'string', default: '20000' } } });
const streams = Number(values.streams);
if (!Number.isInteger(streams) || streams < 100) throw new Error('--streams takes an integer of at least 100');

const script = scriptedStream('openai', 'gpt-4o-mini');
const reads = [script.head, ...script.tokens];
const request = chatToCanonical(
  parseChatRequest({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true }),
);
const pricing = new PricingRegistry();
const PREFIX = '{"id":"chatcmpl-req","object":"chat.completion.chunk","created":1782955818,"model":"openai/gpt-4o-mini",';

function accountant(): Accountant {
  return new Accountant({
    requestId: 'req',
    keyId: null,
    provider: 'openai',
    model: 'gpt-4o-mini',
    requestedModel: 'openai/gpt-4o-mini',
    surface: 'chat',
    streamed: true,
    request,
    pricing,
    storeContentChars: 0,
  });
}

/** Bytes each side made: kept in a module variable, so no side's work can be optimized away. */
let written = 0;

function decodeEncode(): void {
  const surface = new ChatStreamSurface(
    {
      id: 'chatcmpl-req',
      created: 1782955818,
      model: 'openai/gpt-4o-mini',
      provider: 'openai',
      includeUsage: false,
      usageExtensions: false,
      stream: STREAM_PROFILES.openai.chat,
    },
    accountant(),
    { requestId: 'req', provider: 'openai', model: 'gpt-4o-mini' },
  );
  const decoder = createSseStreamDecoder(
    'openai',
    createOpenAICompatibleFrameDecoder({ provider: 'openai', splitThinkTags: false }),
  );
  for (const read of reads) {
    let frames = '';
    for (const event of decoder.push(read)) frames += surface.encode(event);
    written += frames.length;
  }
}

function splice(): void {
  const seen = accountant();
  const texts = new TextChunkReader();
  let frames = '';
  const framer = createSseFramer({
    onFrame: ({ data }) => {
      const text = texts.read(data);
      if (text !== undefined) seen.observe({ type: 'text', choice: 0, text });
      // The upstream's choices kept as they came; its id, model and vendor fields replaced.
      frames += `data: ${PREFIX}${data.slice(data.indexOf('"choices":'), data.lastIndexOf('],"usage"'))}]}\n\n`;
    },
    onInvalid: () => {},
  });
  for (const read of reads) {
    framer.push(read);
    written += frames.length;
    frames = '';
  }
}

function framing(): void {
  const framer = createSseFramer({ onFrame: ({ data }) => (written += data.length), onInvalid: () => {} });
  for (const read of reads) framer.push(read);
}

const sides = { 'decode + encode': decodeEncode, splice, 'framing alone': framing };
const best = new Map<string, number>();
for (let round = 0; round < 3; round++) {
  for (const [name, side] of Object.entries(sides)) {
    for (let i = 0; i < streams / 10; i++) side();
    const start = process.cpuUsage();
    for (let i = 0; i < streams; i++) side();
    const used = process.cpuUsage(start);
    const us = (used.user + used.system) / streams;
    best.set(name, Math.min(best.get(name) ?? Infinity, us));
  }
}
for (const [name, us] of best)
  console.log(`${name.padEnd(16)} ${us.toFixed(2)} us a stream (${(us / reads.length).toFixed(3)} us a read)`);
const saved = (best.get('decode + encode') ?? 0) - (best.get('splice') ?? 0);
console.log(
  `a splice saves at most ${saved.toFixed(2)} us a ${reads.length}-read stream (best of 3 rounds, ${streams} streams each)`,
);
