import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { parseSse, requestRecord, startGateway, type TestGateway } from '../helpers/gateway.ts';
import { speakAsTestCallers } from './limits-support.ts';

const MODEL = 'anthropic/claude-sonnet-4-5';
/** $0.001 a token in and out: a budget of $0.05 is 50 tokens. */
const PRICED = { pricing: { [MODEL]: { input_mtok: 1000, output_mtok: 1000 } } };
const SSE = { 'content-type': 'text/event-stream' };

const frame = (payload: Record<string, unknown>) => `event: ${String(payload.type)}\ndata: ${JSON.stringify(payload)}\n\n`;

/** An Anthropic stream, one piece per frame: message_start, one text block of `deltas`, the end. */
function messagesPieces(deltas: readonly string[]): string[] {
  const usage = { input_tokens: 10, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  return [
    frame({ type: 'message_start', message: { id: 'msg_up', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], usage } }),
    frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    ...deltas.map((text) => frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } })),
    frame({ type: 'content_block_stop', index: 0 }),
    frame({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: deltas.length } }),
    frame({ type: 'message_stop' }),
  ];
}

describe('budgets: a Messages stream relayed to Anthropic is stopped by its budget as it streams', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    gw = await startGateway(PRICED, { ANTHROPIC_API_KEY: 'sk-ant-e2e', ANTHROPIC_BASE_URL: upstream.url });
    speakAsTestCallers(gw, [{ scope: 'key', period: 'day', limitUsd: 0.05 }]);
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('closes the open block and ends with max_tokens; the upstream is cut; the row says budget_exhausted', async () => {
    // 60 deltas of 8 bytes = ~120 tokens of output: far past a 50-token budget.
    upstream.reply({ headers: SSE, pieces: messagesPieces(Array.from({ length: 60 }, () => 'tokens. ')), delayMs: 5 });
    const closedBefore = upstream.closedEarly;
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-test-key': 'relay' },
      body: JSON.stringify({ model: MODEL, max_tokens: 1000, stream: true, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    assert.equal(res.status, 200);
    const frames = parseSse(await res.text()).frames.map((f) => JSON.parse(f.data) as Record<string, any>);
    const types = frames.map((f) => f.type);
    assert.equal(types[0], 'message_start');
    assert.deepEqual(types.slice(-3), ['content_block_stop', 'message_delta', 'message_stop']);
    assert.equal(frames.at(-2)?.delta.stop_reason, 'max_tokens');
    const streamed = frames
      .filter((f) => f.type === 'content_block_delta')
      .map((f) => f.delta.text)
      .join('');
    assert.ok(streamed.length > 0 && streamed.length < 60 * 8, `streamed ${streamed.length} bytes`);
    await upstream.waitForEarlyClose(5_000, closedBefore + 1);
    const row = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
    assert.equal(row.outcome, 'ok');
    assert.equal(row.finish_reason, 'budget_exhausted');
    assert.ok(row.usage.output_tokens > 0, 'the output streamed before the stop is billed');
  });

  it('a grant too small for the first read still starts the message it ends (one upstream read)', async () => {
    // $0.0085: the 7-token prompt and one token of output fit (the least a request is let in for),
    // its first delta (4 tokens) does not; the whole stream comes in one read.
    speakAsTestCallers(gw, [{ scope: 'key', period: 'day', limitUsd: 0.0085 }]);
    upstream.reply({ headers: SSE, body: messagesPieces(['tokens. tokens. ']).join('') });
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-test-key': 'relay-prompt-only' },
      body: JSON.stringify({ model: MODEL, max_tokens: 1000, stream: true, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    const frames = parseSse(await res.text()).frames.map((f) => JSON.parse(f.data) as Record<string, any>);
    assert.deepEqual(
      frames.map((f) => f.type),
      ['message_start', 'message_delta', 'message_stop'],
    );
    assert.equal(frames[0].message.id, `msg_${res.headers.get('x-request-id')}`);
    assert.equal(frames[1].delta.stop_reason, 'max_tokens');
  });

  it('the Anthropic SDK reads the stopped stream to its final message', async () => {
    speakAsTestCallers(gw, [{ scope: 'key', period: 'day', limitUsd: 0.05 }]);
    upstream.reply({ headers: SSE, pieces: messagesPieces(Array.from({ length: 60 }, () => 'tokens. ')), delayMs: 5 });
    const client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0, defaultHeaders: { 'x-test-key': 'sdk' } });
    const message = await client.messages.stream({ model: MODEL, max_tokens: 1000, messages: [{ role: 'user', content: 'Hi' }] }).finalMessage();
    assert.equal(message.stop_reason, 'max_tokens');
    assert.equal(message.content[0].type, 'text');
    assert.ok((message.content[0] as Anthropic.TextBlock).text.length > 0);
  });
});
