import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeAll } from '../../../test/helpers/decode.ts';
import { splitRandomly } from '../../../test/helpers/fake-upstream.ts';
import { openAIPayloads, openAIStreamBody } from '../../../test/helpers/fixtures.ts';
import {
  type ExpectedMessage,
  expectedFromRecording,
  openAICompatibleRecordings,
  withThinkTagsAsReasoning,
} from '../../../test/helpers/openai-recordings.ts';
import { type AssembledMessage, assemble } from '../../protocol/canonical/assemble.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import { createSseStreamDecoder } from '../sse-decoder.ts';
import { createOpenAICompatibleFrameDecoder } from './decode-stream.ts';

function decode(reads: Uint8Array[], splitThinkTags = false): CanonicalEvent[] {
  return decodeAll(createSseStreamDecoder('up', createOpenAICompatibleFrameDecoder({ provider: 'up', splitThinkTags })), reads);
}

function decodeWhole(name: string, splitThinkTags = false): CanonicalEvent[] {
  return decode([openAIStreamBody(name)], splitThinkTags);
}

/** The assembled message in the expectation's shape. */
function summarize(m: AssembledMessage): Omit<ExpectedMessage, 'rawUsage'> {
  const u = m.usage;
  return {
    choices: m.choices.map((c) => ({
      content: c.text,
      reasoning: c.reasoning,
      refusal: c.refusal,
      toolCalls: c.toolCalls,
      annotations: c.annotations.map(({ type, url, title, startIndex, endIndex, content }) => ({
        type,
        url_citation: { url, title, start_index: startIndex, end_index: endIndex, ...(content !== undefined && { content }) },
      })),
      finishReason: c.finishReason,
      logprobs: c.logprobs.content,
    })),
    usage: u && {
      prompt_tokens: u.inputTokens,
      completion_tokens: u.outputTokens,
      total_tokens: u.inputTokens + u.outputTokens,
      ...(u.cachedInputTokens !== undefined && { cached_tokens: u.cachedInputTokens }),
      ...(u.cacheWriteTokens !== undefined && { cache_write_tokens: u.cacheWriteTokens }),
      ...(u.reasoningTokens !== undefined && { reasoning_tokens: u.reasoningTokens }),
      ...(u.audioInputTokens !== undefined && { audio_input_tokens: u.audioInputTokens }),
      ...(u.audioOutputTokens !== undefined && { audio_output_tokens: u.audioOutputTokens }),
      ...(u.acceptedPredictionTokens !== undefined && { accepted_prediction_tokens: u.acceptedPredictionTokens }),
      ...(u.rejectedPredictionTokens !== undefined && { rejected_prediction_tokens: u.rejectedPredictionTokens }),
    },
    error: m.error?.message ?? null,
  };
}

function withoutRawUsage({ rawUsage: _, ...rest }: ExpectedMessage): Omit<ExpectedMessage, 'rawUsage'> {
  return rest;
}

describe('OpenAI-compatible decoder on every recording', () => {
  it('covers every provider folder', () => {
    const folders = new Set(openAICompatibleRecordings.map((name) => name.split('/')[0]));
    assert.deepEqual([...folders].sort(), [
      'deepseek',
      'gpustack',
      'groq',
      'huggingface',
      'mistral',
      'ollama',
      'openai-chat',
      'openrouter',
      'qwen',
      'vllm',
      'xai',
      'zai',
    ]);
  });

  for (const name of openAICompatibleRecordings) {
    it(`assembles what ${name} says`, () => {
      const message = assemble(decodeWhole(name));
      assert.deepEqual(summarize(message), withoutRawUsage(expectedFromRecording(name)));
    });

    it(`decodes ${name} the same whatever the read boundaries`, () => {
      const body = openAIStreamBody(name);
      const whole = decodeWhole(name);
      for (let seed = 1; seed <= 20; seed++) {
        const reads = splitRandomly(body, seed, [2, 9, 64, 500][seed % 4]);
        assert.deepEqual(decode(reads), whole, `seed ${seed}`);
      }
    });
  }
});

describe('OpenAI-compatible decoder quirks, pinned on their recordings', () => {
  it("Azure: the prompt_filter_results chunk with empty choices adds only the prompt's verdicts; each choice's come before its delta", () => {
    const name = 'openai-chat/azure-gpt35-text-content-filter.sse';
    const events = decodeWhole(name);
    assert.deepEqual(events[0], { type: 'start', upstreamId: '', upstreamModel: '', systemFingerprint: null, serviceTier: null });
    const chunks = openAIPayloads(name)
      .filter((p) => p.data !== '[DONE]')
      .map((p) => JSON.parse(p.data) as { prompt_filter_results?: unknown[]; choices: { content_filter_results?: object }[] });
    assert.deepEqual(events[1], { type: 'content-filter', choice: null, results: chunks[0].prompt_filter_results });
    const verdicts = events.flatMap((e) => (e.type === 'content-filter' && e.choice === 0 ? [e.results] : []));
    assert.deepEqual(
      verdicts,
      chunks.flatMap((c) => c.choices.map((choice) => choice.content_filter_results)),
    );
    assert.equal(events.find((e) => e.type !== 'content-filter' && e.type !== 'start')?.type, 'text');
    assert.equal(events.filter((e) => e.type === 'finish').length, 1);
  });

  it('logprobs travel with each content token', () => {
    const events = decodeWhole('openai-chat/gpt4o-content-logprobs.sse');
    const text = events.filter((e) => e.type === 'text');
    assert.deepEqual(
      text.map((e) => [e.text, e.logprobs?.map((l) => l.token)]),
      [
        ['Foo', ['Foo']],
        ['!', ['!']],
      ],
    );
  });

  it('refusal deltas become refusal, not content', () => {
    const message = assemble(decodeWhole('openai-chat/gpt4o-refusal-structured-output.sse'));
    assert.equal(message.choices[0]?.text, null);
    assert.equal(message.choices[0]?.refusal, "I'm sorry, I can't assist with that request.");
  });

  it('n=3: three interleaved choices, each with one finish', () => {
    const events = decodeWhole('openai-chat/gpt4o-n3-multiple-choices.sse');
    const finishes = events.filter((e) => e.type === 'finish').map((e) => [e.choice, e.reason]);
    assert.deepEqual(finishes, [
      [0, 'stop'],
      [1, 'stop'],
      [2, 'stop'],
    ]);
    assert.equal(assemble(events).choices.length, 3);
  });

  it('Mistral: thinking parts of typed content arrays become reasoning', () => {
    const [choice] = assemble(decodeWhole('mistral/magistral-thinking-chunks.sse')).choices;
    assert.ok(choice?.reasoning?.startsWith('Okay, the user is'));
    assert.ok(choice?.text && !choice.text.includes('"thinking"'));
  });

  it('Mistral: a whole tool call, its finish and usage in one chunk', () => {
    const events = decodeWhole('mistral/tool-call-small.sse');
    assert.deepEqual(events.slice(1), [
      { type: 'tool-call-start', choice: 0, index: 0, id: 'g6fVbXS8K', name: 'weather' },
      { type: 'tool-call-delta', choice: 0, index: 0, arguments: '{"latitude": "52.5200", "longitude": "13.4050"}' },
      { type: 'finish', choice: 0, reason: 'tool_calls', rawReason: 'tool_calls' },
      { type: 'usage', usage: { inputTokens: 159, outputTokens: 28, cachedInputTokens: 128, source: 'provider' } },
      // `data: [DONE]`: nothing follows.
      { type: 'end' },
    ]);
  });

  it('xAI: completion_tokens excludes reasoning, so output tokens add it back', () => {
    const { usage } = assemble(decodeWhole('xai/chat-grok3-mini-reasoning-text-2.jsonl'));
    // Recorded: prompt 12, completion 2, reasoning 340, total 354; the audio and prediction details, all 0, are kept.
    assert.deepEqual(usage, {
      inputTokens: 12,
      outputTokens: 342,
      cachedInputTokens: 11,
      reasoningTokens: 340,
      audioInputTokens: 0,
      audioOutputTokens: 0,
      acceptedPredictionTokens: 0,
      rejectedPredictionTokens: 0,
      source: 'provider',
    });
  });

  it('Groq: usage comes from x_groq.usage', () => {
    const { usage } = assemble(decodeWhole('groq/text-legacy.sse'));
    assert.deepEqual(usage, { inputTokens: 18, outputTokens: 73, source: 'provider' });
  });

  it('Groq: `event: error` mid-stream is an error event with the upstream message and status 400', () => {
    const events = decodeWhole('groq/midstream-error-tool-use-failed.sse');
    const last = events.at(-1);
    assert.equal(last?.type, 'error');
    assert.equal(events.filter((e) => e.type === 'error').length, 1);
    assert.equal(events.filter((e) => e.type === 'finish').length, 0);
    if (last?.type !== 'error') return;
    assert.match(last.error.message, /^Tool call validation failed: .*missing properties: 'name'/);
    assert.equal(last.error.status, 400);
    assert.equal(last.error.type, 'invalid_request_error');
    assert.deepEqual([last.error.code, last.error.upstreamCode], ['invalid_request', 'tool_use_failed']);
    assert.equal(last.error.provider, 'up');
  });

  it('OpenRouter: a duplicated finish counts once, then usage is kept and the error chunk fails the stream', () => {
    const events = decodeWhole('openrouter/stream-error-chunk.sse');
    assert.deepEqual(
      events.slice(-4).map((e) => e.type),
      ['finish', 'usage', 'error', 'end'],
    );
    assert.deepEqual(
      events.filter((e) => e.type === 'finish'),
      [{ type: 'finish', choice: 0, reason: 'length', rawReason: 'length' }],
    );
    const message = assemble(events);
    assert.deepEqual(message.usage, {
      inputTokens: 43,
      outputTokens: 10,
      cachedInputTokens: 0,
      reasoningTokens: 11,
      audioInputTokens: 0,
      source: 'provider',
    });
    assert.equal(message.error?.message, 'Token limit reached');
    assert.equal(message.error?.status, 400);
  });

  it('Hugging Face: <think> tags stay in the content by default', () => {
    const [choice] = assemble(decodeWhole('huggingface/router-together-deepseek-r1-think-tags.sse')).choices;
    assert.ok(choice?.text?.startsWith('<think>\nOkay'));
    assert.ok(choice?.text?.includes('</think>'));
    assert.equal(choice?.reasoning, null);
  });

  it('Hugging Face: with splitThinkTags the <think> block becomes reasoning, whatever the read boundaries', () => {
    const name = 'huggingface/router-together-deepseek-r1-think-tags.sse';
    const expected = withoutRawUsage(withThinkTagsAsReasoning(expectedFromRecording(name)));
    const whole = decodeWhole(name, true);
    assert.deepEqual(summarize(assemble(whole)), expected);
    assert.ok(!expected.choices[0]?.content?.includes('<think>'));
    for (let seed = 1; seed <= 5; seed++) {
      assert.deepEqual(decode(splitRandomly(openAIStreamBody(name), seed, 7), true), whole, `seed ${seed}`);
    }
  });

  it('GPUStack: a stream without [DONE] still ends cleanly', () => {
    const events = decodeWhole('gpustack/qwen3-reasoning-content.sse');
    assert.equal(events.filter((e) => e.type === 'error').length, 0);
    assert.equal(events.filter((e) => e.type === 'finish').length, 1);
  });
});

describe('openai-compatible stream endings', () => {
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'x', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const read = (text: string) => [new TextEncoder().encode(text)];

  it('regression: text held back as a possible <think> tag goes out before the finish and the end marker (it came after both, and was dropped)', () => {
    const events = decode(read(chunk({ content: 'a < b is <' }) + chunk({}, 'stop') + 'data: [DONE]\n\n'), true);
    assert.deepEqual(
      events.filter((e) => e.type !== 'start').map((e) => (e.type === 'text' ? e.text : e.type)),
      ['a < b is ', '<', 'finish', 'end'],
    );
  });

  it('regression: bytes after [DONE] in the same read do not fail a stream that has ended', () => {
    const events = decode(read(`${chunk({ content: 'Hi' }, 'stop')}data: [DONE]\n\n<html>502</html>\n`));
    assert.deepEqual(
      events.map((e) => e.type),
      ['start', 'text', 'finish', 'end'],
    );
  });
});

describe('openai-compatible vendor events', () => {
  it("keeps a data line whose type starts with x_ as a vendor event, in place and as the upstream's text", () => {
    const vendor = '{"type":"x_research.searching","name":"web_search","arguments":"{\\"query\\":\\"q\\"}"}';
    const chunk = (content: string) => `data: ${JSON.stringify({ id: 'x', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
    const events = decode([new TextEncoder().encode(`${chunk('A')}data: ${vendor}\n\n${chunk('B')}data: {"type":"other"}\n\n`)]);
    assert.deepEqual(
      events.filter((e) => e.type !== 'start'),
      [
        { type: 'text', choice: 0, text: 'A', logprobs: undefined },
        { type: 'vendor', data: vendor },
        { type: 'text', choice: 0, text: 'B', logprobs: undefined },
      ],
    );
  });
});
