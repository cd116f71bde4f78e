/**
 * The bytes the fake upstream streams for one response: written as `head` (with the headers),
 * then one write per content token, then `tail`. Shapes follow the recordings in
 * test/fixtures (openai-chat/gpt4o-mini-text-after-tool.sse, anthropic/text-haiku45.sse).
 */
export type UpstreamProtocol = 'openai' | 'anthropic';

export interface ScriptedStream {
  head: Buffer;
  tokens: Buffer[];
  tail: Buffer;
}

/** 20 content chunks per response, as the issue asks. */
export const TOKENS: readonly string[] = [
  'Rivers',
  ' carve',
  ' valleys',
  ' slowly',
  ',',
  ' carrying',
  ' silt',
  ' from',
  ' mountain',
  ' springs',
  ' toward',
  ' wide',
  ' deltas',
  ' where',
  ' herons',
  ' wait',
  ' beside',
  ' quiet',
  ' reeds',
  '.',
];

export const EXPECTED_TEXT = TOKENS.join('');

/** `bench-pace-20` asks for 20 ms between chunks; any other model streams as fast as it can. */
export function paceFromModel(model: string): number {
  const match = /pace-(\d+)/.exec(model);
  return match ? Number(match[1]) : 0;
}

/**
 * `bench-pace-1000-tokens-150` asks for 150 content chunks (the soak's long, slow streams: the 20
 * tokens over and over); without it a stream carries the 20 once.
 */
export function tokensFromModel(model: string): number | undefined {
  const match = /tokens-(\d+)/.exec(model);
  return match ? Number(match[1]) : undefined;
}

export function scriptedStream(protocol: UpstreamProtocol, model: string): ScriptedStream {
  return protocol === 'anthropic' ? anthropicStream(model) : openAIStream(model);
}

function openAIStream(model: string): ScriptedStream {
  const prefix =
    `{"id":"chatcmpl-bench0000000000000000000000","object":"chat.completion.chunk","created":1782955818,` +
    `"model":${JSON.stringify(model)},"service_tier":"default","system_fingerprint":"fp_bench","choices":[`;
  const frame = (choice: string, usage = 'null') => `data: ${prefix}${choice}],"usage":${usage},"obfuscation":"x1y2"}\n\n`;
  const usage =
    '{"prompt_tokens":24,"completion_tokens":20,"total_tokens":44,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},' +
    '"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}';
  return {
    head: Buffer.from(
      frame('{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}'),
    ),
    tokens: TOKENS.map((t) =>
      Buffer.from(frame(`{"index":0,"delta":{"content":${JSON.stringify(t)}},"logprobs":null,"finish_reason":null}`)),
    ),
    tail: Buffer.from(
      frame('{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}') +
        `data: ${prefix}],"usage":${usage},"obfuscation":"x1y2"}\n\n` +
        'data: [DONE]\n\n',
    ),
  };
}

function anthropicStream(model: string): ScriptedStream {
  const frame = (event: string, data: string) => `event: ${event}\ndata: ${data}\n\n`;
  const start =
    `{"type":"message_start","message":{"model":${JSON.stringify(model)},"id":"msg_bench000000000000000000","type":"message",` +
    '"role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":24,' +
    '"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1,"service_tier":"standard"}}}';
  return {
    head: Buffer.from(
      frame('message_start', start) +
        frame('content_block_start', '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}'),
    ),
    tokens: TOKENS.map((t) =>
      Buffer.from(
        frame(
          'content_block_delta',
          `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${JSON.stringify(t)}}}`,
        ),
      ),
    ),
    tail: Buffer.from(
      frame('content_block_stop', '{"type":"content_block_stop","index":0}') +
        frame(
          'message_delta',
          '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},' +
            '"usage":{"input_tokens":24,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":20}}',
        ) +
        frame('message_stop', '{"type":"message_stop"}'),
    ),
  };
}

/** The unary mode's answer text: short enough that the whole completion fits the boards' 256 bytes. */
export const UNARY_TEXT = 'Rivers.';

/** The public gateway boards' non-streaming answer size, in bytes. */
export const UNARY_BYTES = 256;

/**
 * The non-streaming answer (unary mode): a Chat Completions `chat.completion` of exactly
 * `UNARY_BYTES`, its id padded to the size.
 */
export function unaryCompletion(model: string): Buffer {
  const body = (id: string) =>
    JSON.stringify({
      id,
      object: 'chat.completion',
      created: 1782955818,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: UNARY_TEXT }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 24, completion_tokens: 2, total_tokens: 26 },
    });
  const pad = UNARY_BYTES - Buffer.byteLength(body('chatcmpl-'));
  if (pad < 0) throw new Error(`the unary completion for ${model} exceeds ${UNARY_BYTES} bytes`);
  return Buffer.from(body(`chatcmpl-${'b'.repeat(pad)}`));
}
