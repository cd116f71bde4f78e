import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { APIError } from 'openai';
import { parseSse, rawStream, requestRecord, upstreamConfig, useUpstreamGateway } from '../helpers/gateway.ts';
import { asSent } from '../helpers/responses-client.ts';
import { checkResponsesStream, type TerminalResponse } from '../helpers/responses-grammar.ts';
import { relayBodies, responsesRecordings } from '../helpers/responses-recordings.ts';

const SSE_UTF8 = 'text/event-stream; charset=utf-8';
const MODEL = 'up/recorded';

/** Every stream the fixtures hold, one test each (a .jsonl may hold several). */
const streams = responsesRecordings.flatMap((name) => {
  const bodies = relayBodies(name);
  return bodies.map((body, i) => ({ label: bodies.length > 1 ? `${name} #${i + 1}` : name, body }));
});

/** The response in a body's last frame (a whole recording's terminal event). */
function lastResponse(body: string): TerminalResponse & { usage: Record<string, any> | null } {
  const last = parseSse(body).frames.at(-1)!;
  return JSON.parse(last.data).response;
}

/** A recording with the sequence_number every event must carry put in where it lacks one. */
function numbered(body: string): string {
  let sequence = 0;
  return body.replace(/^data: (\{"type":"[^"]+")(.*)$/gm, (line, head: string, rest: string) => {
    const own = rest.includes('"sequence_number":');
    return own ? (sequence++, line) : `data: ${head},"sequence_number":${sequence++}${rest}`;
  });
}

/** A ledger record's usage as a Responses `usage` object (surfaces/responses/encode-response.ts: responsesUsage). */
function responsesUsageOf(usage: Record<string, number>): Record<string, unknown> {
  return {
    input_tokens: usage.input_tokens,
    input_tokens_details: { cached_tokens: usage.cached_input_tokens },
    output_tokens: usage.output_tokens,
    output_tokens_details: { reasoning_tokens: usage.reasoning_tokens },
    total_tokens: usage.input_tokens + usage.output_tokens,
  };
}

/**
 * The body with its terminal event's `"usage":null` (the failed recording's) replaced by the usage
 * so far, which sluice puts there (docs/streams/contract.md "How a stream ends"): the ledger's.
 */
function withUsageSoFar(body: string, usage: Record<string, number>): string {
  const at = body.lastIndexOf('"usage":null');
  return `${body.slice(0, at)}"usage":${JSON.stringify(responsesUsageOf(usage))}${body.slice(at + '"usage":null'.length)}`;
}

describe('relay: a provider with its own Responses API (responses_api: true)', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({ config: upstreamConfig(url, { responses_api: true }) }));

  streams.forEach(({ label, body }, i) => {
    it(`relays ${label} frame for frame, finalResponse() is the recording's, usage in the ledger`, async () => {
      const recorded = lastResponse(body);
      upstream.reply({ body, randomSplit: { seed: 4000 + i } });
      const raw = await rawStream(gw.url, { model: MODEL, input: 'hi', stream: true }, {}, '/v1/responses');
      assert.equal(raw.status, 200);
      assert.equal(raw.headers.get('content-type'), SSE_UTF8);
      checkResponsesStream(raw.text, { upstream: true });

      const sent = upstream.requests.at(-1)!;
      assert.equal(sent.url, '/v1/responses');
      assert.deepEqual(sent.json, { model: 'recorded', input: 'hi', stream: true });

      const u = recorded.usage;
      const record = await requestRecord(gw, raw.headers.get('x-request-id')!);
      // The recordings are framed `event:` + `data:` + blank line, as sluice frames: byte for byte,
      // except for the sequence numbers the older recordings lack (relay-grammar.ts), and the usage
      // so far in a terminal event that had none.
      const relayed = u ? numbered(body) : withUsageSoFar(numbered(body), record.usage);
      assert.equal(raw.text, `${relayed}data: [DONE]\n\n`);
      assert.deepEqual(
        { surface: record.surface, outcome: record.outcome, usage: u && record.usage },
        {
          surface: 'responses',
          outcome: recorded.status === 'failed' ? 'error' : 'ok',
          // The failed recording has no usage: sluice estimates the input (not compared here).
          usage: u && {
            input_tokens: u.input_tokens,
            cached_input_tokens: u.input_tokens_details?.cached_tokens ?? 0,
            cache_write_tokens: 0,
            output_tokens: u.output_tokens,
            reasoning_tokens: u.output_tokens_details?.reasoning_tokens ?? 0,
            estimated: false,
          },
        },
      );

      upstream.reply({ body, randomSplit: { seed: 5000 + i } });
      const stream = gw.client.responses.stream({ model: MODEL, input: 'hi' });
      if (recorded.status === 'failed') {
        await assert.rejects(stream.finalResponse(), (err: unknown) => err instanceof APIError && err.message === recorded.error?.message);
      } else {
        assert.deepEqual(asSent(await stream.finalResponse()), recorded);
        // Kept for GET under the upstream's id.
        assert.deepEqual(asSent(await gw.client.responses.retrieve(recorded.id)), recorded);
      }
    });
  });

  it('the insufficient-quota failure: the upstream error and response.failed, then [DONE]', async () => {
    const [body] = relayBodies('openai-responses/failed-insufficient-quota.jsonl');
    upstream.reply({ body });
    const raw = await rawStream(gw.url, { model: MODEL, input: 'hi', stream: true }, {}, '/v1/responses');
    const { events } = checkResponsesStream(raw.text, { upstream: true });
    assert.deepEqual(
      events.map((e) => e.type),
      ['response.created', 'response.in_progress', 'error', 'response.failed'],
    );
    const record = await requestRecord(gw, raw.headers.get('x-request-id')!);
    assert.equal(record.error.code, 'insufficient_quota');
    assert.match(record.error.message, /^You exceeded your current quota/);
  });

  it('an upstream cut before its terminal event: error + response.failed of sluice for the upstream response, then [DONE]', async () => {
    const [body] = relayBodies('openai-responses/text-gpt5-nano.sse');
    const head = body.slice(0, body.indexOf('event: response.output_item.added'));
    upstream.reply({ body: head, after: 'reset' });
    const raw = await rawStream(gw.url, { model: MODEL, input: 'hi', stream: true }, {}, '/v1/responses');
    assert.ok(raw.text.startsWith(head));
    const { events, terminal } = checkResponsesStream(raw.text, { upstream: true });
    const created = lastResponse(head.slice(0, head.indexOf('event: response.in_progress')));
    const message = 'Could not complete the request to up: other side closed (UND_ERR_SOCKET)';
    assert.deepEqual(events.slice(2), [
      { type: 'error', sequence_number: 2, error: { type: 'upstream_error', code: 'upstream_connection_error', message, param: null } },
      { ...terminal, sequence_number: 3 },
    ]);
    const record = await requestRecord(gw, raw.headers.get('x-request-id')!);
    assert.deepEqual(terminal.response, {
      ...created,
      status: 'failed',
      error: { code: 'upstream_connection_error', message },
      usage: responsesUsageOf(record.usage),
    });

    // Cut inside an item: the frames so far as sent, and the SDK raises with the cause.
    const mid = body.slice(0, body.lastIndexOf('event: response.output_text.delta'));
    upstream.reply({ body: mid, after: 'reset' });
    await assert.rejects(
      gw.client.responses.stream({ model: MODEL, input: 'hi' }).finalResponse(),
      (err: unknown) => err instanceof APIError && err.message === message,
    );
  });

  it('hosted tools (web_search) go to the upstream as sent', async () => {
    const [body] = relayBodies('openai-responses/web-search-cached-tokens.sse');
    upstream.reply({ body });
    const request = {
      model: MODEL,
      instructions: 'You are a helpful assistant.',
      input: 'What is the weather in San Francisco?',
      tools: [{ type: 'web_search' as const }],
      include: ['reasoning.encrypted_content' as const],
    };
    const final = await gw.client.responses.stream(request).finalResponse();
    assert.equal(final.output.map((o) => o.type).join(), 'reasoning,web_search_call,reasoning,message');
    assert.deepEqual(upstream.requests.at(-1)?.json, { ...request, model: 'recorded', stream: true });
  });

  it('non-streaming: the upstream response as sent, kept for GET /v1/responses/{id}', async () => {
    const recorded = lastResponse(relayBodies('openai-responses/function-call.sse')[0]);
    upstream.reply({ headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...recorded, status: 'completed' }) });
    const response = await gw.client.responses.create({ model: MODEL, input: 'hi' });
    assert.deepEqual(upstream.requests.at(-1)?.json, { model: 'recorded', input: 'hi', stream: false });
    assert.deepEqual(asSent(response), recorded);
    assert.deepEqual(await gw.client.responses.retrieve(recorded.id), response);
  });
});

describe('relay, the request log with store_content on: a response streamed or whole records the same', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({
    config: { ...upstreamConfig(url, { responses_api: true }), ledger: { store_content: true, flush_interval_ms: 10 } },
  }));

  streams.forEach(({ label, body }) => {
    const recorded = lastResponse(body);
    if (recorded.status === 'failed') return;
    it(`${label}: completion, finish reason and output tokens`, async () => {
      upstream.reply({ body });
      const raw = await rawStream(gw.url, { model: MODEL, input: 'hi', stream: true }, {}, '/v1/responses');
      const streamed = await requestRecord(gw, raw.headers.get('x-request-id')!);

      upstream.reply({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(recorded) });
      const res = await fetch(`${gw.url}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, input: 'hi' }),
      });
      assert.equal(res.status, 200);
      const whole = await requestRecord(gw, res.headers.get('x-request-id')!);

      const seen = (r: Record<string, any>) => ({ completion: r.completion, finish_reason: r.finish_reason, usage: r.usage });
      assert.ok(streamed.completion, 'the streamed record holds its output');
      assert.deepEqual(seen(whole), seen(streamed));
    });
  });
});
