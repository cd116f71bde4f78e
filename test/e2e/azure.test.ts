import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { APIError } from 'openai';
import { azureEntraEntry } from '../helpers/azure-entry.ts';
import { openAIPayloads, openAIStreamBody, readFixture } from '../helpers/fixtures.ts';
import { parseSse, rawStream, requestRecord, useUpstreamGateway } from '../helpers/gateway.ts';

const RECORDING = 'openai-chat/azure-gpt35-text-content-filter.sse';
const VERSION = '2024-10-21';
const jsonReply = (body: unknown, status = 200) => ({ status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** What the content filter said in a stream's chunks, in order: the prompt's, then each choice chunk's. */
function verdicts(payloads: readonly Record<string, any>[]) {
  return {
    prompt: payloads.flatMap((p) => (p.prompt_filter_results ? [p.prompt_filter_results] : [])),
    choices: payloads.flatMap((p) => (p.choices ?? []).flatMap((c: any) => (c.content_filter_results ? [c.content_filter_results] : []))),
  };
}

const chunksOf = (text: string) =>
  parseSse(text)
    .frames.filter((f) => f.data !== '[DONE]')
    .map((f) => JSON.parse(f.data) as Record<string, any>);

/** A whole answer as Azure's reference shows it: the prompt's and the choice's verdicts. */
const safe = { filtered: false, severity: 'safe' };
const categories = { hate: safe, self_harm: safe, sexual: safe, violence: safe };
const completion = (finish: string, content: string | null) => ({
  id: 'chatcmpl-az',
  object: 'chat.completion',
  created: 1_760_000_000,
  model: 'gpt-4o-2024-11-20',
  prompt_filter_results: [{ prompt_index: 0, content_filter_results: { ...categories, jailbreak: { filtered: false, detected: false } } }],
  choices: [
    {
      index: 0,
      finish_reason: finish,
      message: { role: 'assistant', content },
      content_filter_results: { ...categories, violence: { filtered: finish === 'content_filter', severity: 'medium' } },
    },
  ],
  usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 },
});

describe('azure: the deployments API with an api-key', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({
    config: {
      providers: {
        azure: {
          base_url: url,
          api_key: 'az-key',
          responses_api: true,
          deployments: { 'gpt-35-turbo': 'chat-prod', 'text-embedding-3-small': 'emb' },
        },
      },
    },
  }));
  const last = () => upstream.requests.at(-1)!;

  it("streams the recording with the content filter's verdicts passed on, chunk for chunk", async () => {
    upstream.reply({ headers: { 'content-type': 'text/event-stream' }, body: openAIStreamBody(RECORDING), randomSplit: { seed: 3 } });
    const res = await rawStream(gw.url, {
      model: 'azure/gpt-35-turbo',
      stream: true,
      messages: [{ role: 'user', content: 'Tell me a joke about opentelemetry' }],
    });
    assert.equal(res.status, 200);
    assert.equal(last().url, `/openai/deployments/chat-prod/chat/completions?api-version=${VERSION}`);
    assert.equal(last().headers['api-key'], 'az-key');
    assert.equal(last().headers.authorization, undefined);
    assert.equal((last().json as { stream_options?: unknown }).stream_options !== undefined, true);

    const upstreamChunks = openAIPayloads(RECORDING)
      .filter((p) => p.data !== '[DONE]')
      .map((p) => JSON.parse(p.data) as Record<string, any>);
    const clientChunks = chunksOf(res.text);
    assert.deepEqual(verdicts(clientChunks), verdicts(upstreamChunks));
    const text = (chunks: Record<string, any>[]) =>
      chunks
        .flatMap((c) => c.choices ?? [])
        .map((c: any) => c.delta?.content ?? '')
        .join('');
    assert.equal(text(clientChunks), text(upstreamChunks));
    assert.equal(clientChunks.flatMap((c) => c.choices).at(-1).finish_reason, 'stop');

    const record = await requestRecord(gw, res.headers.get('x-request-id')!);
    assert.equal(record.provider, 'azure');
    assert.equal(record.model, 'gpt-35-turbo');
    assert.equal(record.outcome, 'ok');
  });

  it('keeps the verdicts in a whole answer; a filtered one ends with finish_reason content_filter, priced', async () => {
    upstream.reply(jsonReply(completion('content_filter', null)));
    const answer = (await gw.client.chat.completions.create({
      model: 'azure/gpt-4o',
      messages: [{ role: 'user', content: 'Hi' }],
    })) as unknown as Record<string, any>;
    const sent = completion('content_filter', null);
    assert.equal(last().url, `/openai/deployments/gpt-4o/chat/completions?api-version=${VERSION}`);
    assert.equal(answer.choices[0].finish_reason, 'content_filter');
    assert.deepEqual(answer.prompt_filter_results, sent.prompt_filter_results);
    assert.deepEqual(answer.choices[0].content_filter_results, sent.choices[0].content_filter_results);
    const record = await requestRecord(gw, answer.id as string);
    assert.equal(record.finish_reason, 'content_filter');
    assert.equal(record.usage.input_tokens, 20);
    assert.ok(record.cost_usd > 0, 'azure/gpt-4o is priced from the registry');
  });

  it('answers a prompt the filter refused with a 400 content_filter naming the flagged categories', async () => {
    upstream.reply(
      jsonReply(
        {
          error: {
            message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
            type: null,
            param: 'prompt',
            code: 'content_filter',
            status: 400,
            innererror: {
              code: 'ResponsibleAIPolicyViolation',
              content_filter_result: { ...categories, violence: { filtered: true, severity: 'high' }, jailbreak: { filtered: true, detected: true } },
            },
          },
        },
        400,
      ),
    );
    const err = await gw.client.chat.completions.create({ model: 'azure/gpt-4o', messages: [{ role: 'user', content: 'x' }] }).then(
      () => assert.fail('expected a 400'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof APIError);
    assert.equal(err.status, 400);
    assert.equal(err.code, 'content_filter');
    assert.equal(err.param, 'prompt');
    assert.match(err.message, /azure's content filter refused the prompt \(flagged: violence, jailbreak\)/);
  });

  it('embeds at the deployment of the embedding model', async () => {
    upstream.reply(
      jsonReply({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.5, -0.25] }], usage: { prompt_tokens: 2, total_tokens: 2 } }),
    );
    const res = await gw.client.embeddings.create({ model: 'azure/text-embedding-3-small', input: 'hello' });
    assert.equal(last().url, `/openai/deployments/emb/embeddings?api-version=${VERSION}`);
    assert.equal((last().json as { model: string }).model, 'emb');
    assert.deepEqual(res.data[0].embedding, [0.5, -0.25]);
  });

  it("relays /v1/responses to the resource's Responses API, the deployment as the model", async () => {
    upstream.reply({ headers: { 'content-type': 'text/event-stream' }, body: readFixture('openai-responses/text-gpt5-nano.sse') });
    const res = await rawStream(gw.url, { model: 'azure/gpt-35-turbo', input: 'Hi', stream: true }, {}, '/v1/responses');
    assert.equal(res.status, 200);
    assert.equal(last().url, `/openai/responses?api-version=${VERSION}`);
    assert.equal((last().json as { model: string }).model, 'chat-prod');
    assert.match(res.text, /response\.completed/);
  });
});

describe('azure: the v1 API with Microsoft Entra ID', () => {
  let tokens = 0;
  const { upstream, gw } = useUpstreamGateway((url) => ({
    config: {
      providers: {
        'azure-eu': azureEntraEntry(url, { 'gpt-4o': 'gpt4o-eu' }),
      },
    },
  }));

  it('asks the token endpoint once, then calls {endpoint}/openai/v1 with the bearer token', async () => {
    upstream.reply((req) => {
      if (req.url.endsWith('/oauth2/v2.0/token')) {
        tokens++;
        return jsonReply({ token_type: 'Bearer', expires_in: 3599, access_token: `entra-token-${tokens}` });
      }
      return jsonReply(completion('stop', 'Hello'));
    });
    for (let i = 0; i < 2; i++) {
      const answer = await gw.client.chat.completions.create({ model: 'azure-eu/gpt-4o', messages: [{ role: 'user', content: 'Hi' }] });
      assert.equal(answer.choices[0].message.content, 'Hello');
    }
    assert.equal(tokens, 1);
    const [token, ...calls] = upstream.requests;
    assert.equal(token.url, '/tenant-1/oauth2/v2.0/token');
    const form = new URLSearchParams(token.body);
    assert.equal(form.get('grant_type'), 'client_credentials');
    assert.equal(form.get('client_id'), 'app-1');
    assert.equal(form.get('client_secret'), 'entra-secret');
    assert.equal(form.get('scope'), 'https://cognitiveservices.azure.com/.default');
    for (const call of calls) {
      assert.equal(call.url, '/openai/v1/chat/completions');
      assert.equal(call.headers.authorization, 'Bearer entra-token-1');
      assert.equal(call.headers['api-key'], undefined);
      assert.equal((call.json as { model: string }).model, 'gpt4o-eu');
    }
    assert.ok(!gw.logs.some((line) => line.includes('entra-secret') || line.includes('entra-token-1')), 'neither secret nor token is logged');
  });
});
