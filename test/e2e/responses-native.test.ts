import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nativeProviders } from '../../src/providers/native-providers.ts';
import { bedrockBody, expectedBedrockMessages, reencodedBody } from '../helpers/bedrock-fixtures.ts';
import { readFixture } from '../helpers/fixtures.ts';
import { rawStream, type TestGateway, useUpstreamGateway } from '../helpers/gateway.ts';
import { digest, type ResponseDigest } from '../helpers/responses-client.ts';
import { checkResponsesStream } from '../helpers/responses-grammar.ts';

/**
 * The Responses surface over the native providers (Anthropic, Gemini, Bedrock): their recordings
 * through /v1/responses give a valid event sequence, and the SDK's finalResponse() holds what the
 * recording says (read here straight from its payloads).
 */
const usage = (input: number, output: number, cached = 0, reasoning = 0) => ({
  input_tokens: input,
  input_tokens_details: { cached_tokens: cached },
  output_tokens: output,
  output_tokens_details: { reasoning_tokens: reasoning },
  total_tokens: input + output,
});

function payloads(name: string): Record<string, any>[] {
  return readFixture(name)
    .toString('utf8')
    .split(/\r?\n/)
    .filter((l) => l.startsWith('data:'))
    .map((l) => JSON.parse(l.slice(5)));
}

/** An Anthropic Messages recording, folded: text, thinking (+ signature), tool_use blocks, usage. */
function anthropicExpected(name: string): ResponseDigest & { signature: string | null } {
  let text = '';
  let reasoning = '';
  let signature: string | null = null;
  const calls: ResponseDigest['calls'] = [];
  const u: Record<string, number> = {};
  for (const p of payloads(name)) {
    if (p.type === 'message_start') Object.assign(u, p.message.usage);
    if (p.type === 'message_delta') Object.assign(u, p.usage);
    if (p.type === 'content_block_start' && p.content_block.type === 'tool_use') {
      calls.push({ call_id: p.content_block.id, name: p.content_block.name, arguments: '' });
    }
    const d = p.type === 'content_block_delta' ? p.delta : {};
    text += d.text ?? '';
    reasoning += d.thinking ?? '';
    signature = d.signature ?? signature;
    if (d.partial_json !== undefined) calls[calls.length - 1].arguments += d.partial_json;
  }
  const cached = u.cache_read_input_tokens ?? 0;
  return {
    status: 'completed',
    incomplete: null,
    reasoning: reasoning || null,
    text: text || null,
    refusal: null,
    calls,
    annotations: [],
    usage: usage(u.input_tokens + cached + (u.cache_creation_input_tokens ?? 0), u.output_tokens, cached),
    signature,
  };
}

/** A Gemini recording, folded: thought text, answer text, function calls, the last usageMetadata. */
function geminiExpected(name: string): ResponseDigest & { signature: string | null } {
  let text = '';
  let reasoning = '';
  let signature: string | null = null;
  const calls: ResponseDigest['calls'] = [];
  let u: Record<string, number> = {};
  for (const p of payloads(name)) {
    for (const part of p.candidates?.[0]?.content?.parts ?? []) {
      if (part.thought) reasoning += part.text ?? '';
      else text += part.text ?? '';
      signature = part.thoughtSignature ?? signature;
      if (part.functionCall) calls.push({ call_id: '', name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args) });
    }
    u = p.usageMetadata ?? u;
  }
  const thoughts = u.thoughtsTokenCount ?? 0;
  return {
    status: 'completed',
    incomplete: null,
    reasoning: reasoning || null,
    text: text || null,
    refusal: null,
    calls,
    annotations: [],
    usage: usage(u.promptTokenCount, u.candidatesTokenCount + thoughts, 0, thoughts),
    signature,
  };
}

/** Each provider's cases run once it is registered (src/providers/native-providers.ts). */
const unregistered = (name: string) => !nativeProviders.some((p) => p.name === name) && `${name} is not registered`;

/** The reasoning item's encrypted_content: where a provider signature travels in the Responses API. */
const signatureOf = (output: readonly object[]) =>
  (output as { type: string; encrypted_content?: string }[]).find((o) => o.type === 'reasoning')?.encrypted_content ?? null;

async function throughResponses(gw: TestGateway, model: string) {
  const raw = await rawStream(gw.url, { model, input: 'hi', stream: true }, {}, '/v1/responses');
  assert.equal(raw.status, 200, raw.text);
  const { terminal } = checkResponsesStream(raw.text);
  return terminal.response;
}

describe('the Responses surface over the native providers', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({
    env: {
      ANTHROPIC_API_KEY: 'sk-ant-e2e',
      ANTHROPIC_BASE_URL: url,
      GEMINI_API_KEY: 'gm-e2e',
      GEMINI_BASE_URL: url,
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
      AWS_REGION: 'us-east-1',
      AWS_ENDPOINT_URL_BEDROCK_RUNTIME: url,
    },
  }));

  describe('anthropic', { skip: unregistered('anthropic') }, () => {
    for (const name of ['anthropic/thinking-signature.sse', 'anthropic/parallel-tool-use.sse', 'anthropic/prompt-cache-read.sse']) {
      it(name, async () => {
        const { signature, ...want } = anthropicExpected(name);
        upstream.reply({ body: readFixture(name), randomSplit: { seed: 21, maxPiece: 48 } });
        const wire = await throughResponses(gw, 'anthropic/claude-sonnet-4-5');
        assert.deepEqual(digest(wire), want);
        assert.equal(signatureOf(wire.output), signature);
        upstream.reply({ body: readFixture(name) });
        const final = await gw.client.responses.stream({ model: 'anthropic/claude-sonnet-4-5', input: 'hi' }).finalResponse();
        assert.deepEqual(digest(final), want);
      });
    }

    it('previous_response_id sends the thinking back with its signature', async () => {
      const name = 'anthropic/thinking-signature.sse';
      const { reasoning, text, signature } = anthropicExpected(name);
      upstream.reply({ body: readFixture(name) });
      const first = await gw.client.responses.stream({ model: 'anthropic/claude-sonnet-4-5', input: 'How do I cross?' }).finalResponse();
      upstream.reply({ body: readFixture('anthropic/text-haiku45.sse') });
      await gw.client.responses.stream({ model: 'anthropic/claude-sonnet-4-5', input: 'Thanks', previous_response_id: first.id }).finalResponse();
      const sent = upstream.requests.at(-1)?.json as { messages: unknown[] };
      assert.deepEqual(sent.messages, [
        { role: 'user', content: 'How do I cross?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: reasoning, signature },
            { type: 'text', text },
          ],
        },
        { role: 'user', content: 'Thanks' },
      ]);
    });

    it('a text + tool_use turn continues as one assistant turn, then the tool results', async () => {
      const name = 'anthropic/parallel-tool-use.sse';
      const { text, calls } = anthropicExpected(name);
      upstream.reply({ body: readFixture(name) });
      const first = await gw.client.responses.stream({ model: 'anthropic/claude-sonnet-4-5', input: 'Weather and time in SF?' }).finalResponse();
      assert.deepEqual(
        first.output.map((o) => o.type),
        ['message', 'function_call', 'function_call'],
      );
      upstream.reply({ body: readFixture('anthropic/text-haiku45.sse') });
      const results = calls.map((c, i) => ({ type: 'function_call_output' as const, call_id: c.call_id, output: `result ${i}` }));
      await gw.client.responses.stream({ model: 'anthropic/claude-sonnet-4-5', input: results, previous_response_id: first.id }).finalResponse();
      const sent = upstream.requests.at(-1)?.json as { messages: unknown[] };
      assert.deepEqual(sent.messages, [
        { role: 'user', content: 'Weather and time in SF?' },
        {
          role: 'assistant',
          content: [{ type: 'text', text }, ...calls.map((c) => ({ type: 'tool_use', id: c.call_id, name: c.name, input: JSON.parse(c.arguments) }))],
        },
        {
          role: 'user',
          content: calls.map((c, i) => ({ type: 'tool_result', tool_use_id: c.call_id, content: `result ${i}` })),
        },
      ]);
    });
  });

  describe('google', { skip: unregistered('google') }, () => {
    for (const name of ['gemini/thinking-2.5-pro.sse', 'gemini/function-call-thought-signature-2.5-flash.sse']) {
      it(name, async () => {
        const { signature, ...want } = geminiExpected(name);
        upstream.reply({ body: readFixture(name), randomSplit: { seed: 22, maxPiece: 48 } });
        const wire = await throughResponses(gw, 'google/gemini-2.5-flash');
        // Gemini calls carry no id: sluice names them.
        const unnamed = (d: ResponseDigest) => {
          assert.ok(d.calls.every((c) => c.call_id.length > 0));
          return { ...d, calls: d.calls.map((c) => ({ ...c, call_id: '' })) };
        };
        assert.deepEqual(unnamed(digest(wire)), want);
        assert.equal(signatureOf(wire.output), signature);
        upstream.reply({ body: readFixture(name) });
        const final = await gw.client.responses.stream({ model: 'google/gemini-2.5-flash', input: 'hi' }).finalResponse();
        assert.deepEqual(unnamed(digest(final)), want);
      });
    }
  });

  describe('bedrock', { skip: unregistered('bedrock') }, () => {
    for (const [name, expected] of Object.entries(expectedBedrockMessages)) {
      it(name, async () => {
        const body = name.endsWith('.jsonl') ? reencodedBody(name) : bedrockBody(name);
        upstream.reply({ headers: { 'content-type': 'application/vnd.amazon.eventstream' }, body, randomSplit: { seed: 23, maxPiece: 40 } });
        const model = 'bedrock/us.anthropic.claude-sonnet-4-20250514-v1:0';
        const wire = await throughResponses(gw, model);
        const u = expected.usage;
        const want = {
          status: expected.finishReason === 'length' ? 'incomplete' : 'completed',
          incomplete: expected.finishReason === 'length' ? 'max_output_tokens' : null,
          reasoning: expected.reasoning,
          text: expected.text,
          refusal: null,
          calls: expected.toolCalls.map((t) => ({ call_id: t.id, name: t.name, arguments: t.arguments })),
          annotations: [],
          usage: usage(u.inputTokens, u.outputTokens, u.cachedInputTokens ?? 0, u.reasoningTokens ?? 0),
        };
        assert.deepEqual(digest(wire), want);
        assert.equal(signatureOf(wire.output), expected.reasoningSignature);
        upstream.reply({ headers: { 'content-type': 'application/vnd.amazon.eventstream' }, body });
        assert.deepEqual(digest(await gw.client.responses.stream({ model, input: 'hi' }).finalResponse()), want);
      });
    }
  });
});
