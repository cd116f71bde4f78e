import fc from 'fast-check';
import { errors } from '../src/errors/catalog.ts';
import { GatewayError } from '../src/errors/gateway-error.ts';
import type { CanonicalEvent, TokenLogprob } from '../src/protocol/canonical/events.ts';
import type { ChatChunkEncoderOptions } from '../src/surfaces/chat/encode-stream.ts';
import { checkResponsesStream } from '../test/helpers/responses-grammar.ts';
import { checkChatStream } from './check-client-stream.ts';
import { hostileText } from './hostile-values.ts';
import { type BodyCase, bodyCase, buildBody, splitBody } from './mutate-body.ts';
import { renderChat, renderResponses } from './render-stream.ts';
import { type FuzzTarget, fuzzTarget } from './run-targets.ts';
import { decodeBody, decoders } from './stream-decoders.ts';

/** Mostly choice 0, sometimes others (n > 1), sometimes the largest index a decoder lets through. */
const choice = fc.oneof(
  { weight: 8, arbitrary: fc.constant(0) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 3 }) },
  { weight: 1, arbitrary: fc.constant(127) },
);
const toolIndex = fc.oneof({ weight: 8, arbitrary: fc.nat({ max: 4 }) }, { weight: 1, arbitrary: fc.maxSafeNat() });
const count = fc.oneof(fc.nat({ max: 5000 }), fc.constant(2_147_483_647));
const bytes = fc.option(fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 4 }), { nil: null });
const alternative = fc.record({ token: hostileText, logprob: fc.double(), bytes });
const logprobs: fc.Arbitrary<TokenLogprob[] | undefined> = fc.option(
  fc.array(
    fc.record({ token: hostileText, logprob: fc.double(), bytes, top_logprobs: fc.array(alternative, { maxLength: 2 }) }),
    { maxLength: 2 },
  ),
  { nil: undefined },
);

const failure: fc.Arbitrary<GatewayError> = fc.oneof(
  hostileText.map((detail) => errors.malformed('up', detail)),
  fc.constant(errors.truncated('up')),
  fc.constant(errors.idleTimeout(0.3)),
  fc
    .record({ code: hostileText, message: hostileText, status: fc.integer({ min: 400, max: 599 }) })
    // An upstream's own code passes through as it came (errors/upstream-error.ts), whatever it says.
    .map(
      (e) =>
        new GatewayError({
          code: (e.code || 'x') as GatewayError['code'],
          message: e.message || 'x',
          status: e.status,
          type: 'upstream_error',
        }),
    ),
);

/** Any event sequence within the canonical contract (check-events.ts), hostile strings and numbers included. */
const canonicalEvent: fc.Arbitrary<CanonicalEvent> = fc.oneof(
  fc.record({
    type: fc.constant('start' as const),
    upstreamId: fc.option(hostileText, { nil: undefined }),
    systemFingerprint: fc.option(hostileText, { nil: null }),
    serviceTier: fc.option(hostileText, { nil: null }),
  }),
  { weight: 4, arbitrary: fc.record({ type: fc.constant('text' as const), choice, text: hostileText, logprobs }) },
  fc.record({ type: fc.constant('refusal' as const), choice, text: hostileText, logprobs }),
  fc.record(
    {
      type: fc.constant('reasoning' as const),
      choice,
      text: hostileText,
      signature: fc.option(hostileText, { nil: undefined }),
      redacted: fc.option(hostileText, { nil: undefined }),
    },
    { requiredKeys: ['type', 'choice', 'text'] },
  ),
  fc.record({
    type: fc.constant('annotation' as const),
    choice,
    annotation: fc.record({
      type: fc.constant('url_citation' as const),
      url: hostileText,
      title: hostileText,
      startIndex: fc.integer(),
      endIndex: fc.integer(),
    }),
  }),
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('tool-call-start' as const),
      choice,
      index: toolIndex,
      id: hostileText,
      name: hostileText,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ type: fc.constant('tool-call-delta' as const), choice, index: toolIndex, arguments: hostileText }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('finish' as const),
      choice,
      reason: fc.constantFrom('stop' as const, 'length' as const, 'tool_calls' as const, 'content_filter' as const),
    }),
  },
  fc.record({
    type: fc.constant('usage' as const),
    usage: fc.record(
      {
        inputTokens: count,
        outputTokens: count,
        cachedInputTokens: count,
        cacheWriteTokens: count,
        reasoningTokens: count,
        source: fc.constantFrom('provider' as const, 'estimated' as const),
      },
      { requiredKeys: ['inputTokens', 'outputTokens', 'source'] },
    ),
  }),
  fc.record({ type: fc.constant('error' as const), error: failure }),
  fc.constant({ type: 'end' as const }),
);

/** The recordings of every provider, mutated, through their own decoder: what encoders get in production. */
const decodedStream: fc.Arbitrary<{ family: string; body: BodyCase }> = fc.oneof(
  ...Object.entries(decoders).map(([family, d]) => bodyCase(d.recordings).map((body) => ({ family, body }))),
);

type EncoderInput = { events: CanonicalEvent[] } | { family: string; body: BodyCase; variant: boolean };

/** Keeps the first tool call start of each (choice, index), as every decoder numbers calls afresh (check-events.ts). */
function oneStartPerCall(events: CanonicalEvent[]): CanonicalEvent[] {
  const seen = new Set<string>();
  return events.filter((e) => {
    if (e.type !== 'tool-call-start') return true;
    const key = `${e.choice}:${e.index}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const encoderInput: fc.Arbitrary<EncoderInput> = fc.oneof(
  fc.record({ events: fc.array(canonicalEvent, { maxLength: 30 }).map(oneStartPerCall) }),
  fc.record({ decoded: decodedStream, variant: fc.boolean() }).map(({ decoded, variant }) => ({ ...decoded, variant })),
);

function eventsOf(input: EncoderInput): CanonicalEvent[] {
  if ('events' in input) return input.events;
  const body = buildBody(input.body);
  return decodeBody(decoders[input.family].create(input.variant), splitBody(body, input.body.splits));
}

const chatOptions: fc.Arbitrary<ChatChunkEncoderOptions> = fc.record({
  id: fc.constant('chatcmpl-fuzz'),
  created: fc.constant(1_700_000_000),
  model: fc.constant('up/m'),
  provider: fc.constant('up'),
  includeUsage: fc.boolean(),
  usageExtensions: fc.boolean(),
  // Every combination of the stream profiles' choices (protocol/stream-profiles.ts), not only the named profiles'.
  stream: fc.record({
    frames: fc.constantFrom('chunks' as const, 'accounting' as const),
    usage: fc.constantFrom('opt_in' as const, 'always' as const),
    usageChunk: fc.constantFrom('own' as const, 'finish' as const),
    nullUsage: fc.constantFrom('requested' as const, 'every' as const, 'never' as const),
    toolCallContent: fc.constantFrom('absent' as const, 'null' as const),
    errorStyle: fc.constantFrom('data' as const, 'event' as const),
    errorType: fc.constantFrom('sluice' as const, 'upstream' as const),
    upstreamFailure: fc.constantFrom('http' as const, 'frame' as const),
    vendorEvents: fc.constantFrom('drop' as const, 'passthrough' as const),
  }),
});

const SOURCES =
  "generated canonical event sequences (hostile strings, lone surrogates, huge numbers, n > 1, errors, end markers) and every provider's mutated recordings through its decoder";

export const surfaceEncoderTargets: FuzzTarget[] = [
  fuzzTarget({
    name: 'chat-encoder',
    family: 'surface encoders',
    what: `chat encode-stream (every combination of the stream profiles' choices) over ${SOURCES}: no throw; every frame JSON or the final [DONE]; one choice per chunk; error frame then [DONE] on failure, one finish per started choice otherwise`,
    input: () => fc.record({ input: encoderInput, options: chatOptions }),
    assert({ input, options }) {
      const { body, failure } = renderChat(eventsOf(input), options);
      checkChatStream(body, failure !== null, options.stream.frames === 'accounting');
    },
  }),
  fuzzTarget({
    name: 'responses-encoder',
    family: 'surface encoders',
    what: `responses encode-stream over ${SOURCES}: no throw; every frame JSON and the whole stream within the Responses event grammar (test/helpers/responses-grammar.ts), ending in one terminal event then [DONE]`,
    input: () => encoderInput,
    assert(input) {
      checkResponsesStream(renderResponses(eventsOf(input)).body);
    },
  }),
];
