import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminCall, projectWithKey } from '../helpers/admin-client.ts';
import { type FakeUpstream, type RecordedRequest, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type TestGateway, upstreamConfig } from '../helpers/gateway.ts';
import { createTestSchema, noPostgres, type TestSchema } from '../helpers/postgres.ts';
import { responseJson, responsesSse } from '../helpers/responses-upstream.ts';

const MASTER = 'sk-master-relay-projects';
const MODEL = 'up/gpt-test';

/** The upstream's Responses API: each response gets ids of its own (resp_N, msg_N, conv_N). */
function upstreamResponses(upstream: FakeUpstream): void {
  let n = 0;
  upstream.reply((req: RecordedRequest) => {
    n++;
    const ids = { response: `resp_${n}`, message: `msg_${n}`, conversation: `conv_${n}` };
    const body = req.json as { stream?: boolean };
    if (body.stream) return { body: responsesSse(['Hello', ' there'], ids) };
    return { headers: { 'content-type': 'application/json' }, body: JSON.stringify(responseJson('Hello there', ids)) };
  });
}

interface Answer {
  status: number;
  body: Record<string, any>;
  text: string;
}

async function create(gw: TestGateway, key: string, body: Record<string, unknown>): Promise<Answer> {
  const res = await fetch(`${gw.url}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: MODEL, input: 'hi', ...body }),
  });
  const text = await res.text();
  let parsed: Record<string, any> = {};
  try {
    parsed = JSON.parse(text) as Record<string, any>;
  } catch {
    // A stream: the caller reads `text`.
  }
  return { status: res.status, body: parsed, text };
}

/** The ids a stream handed out: its response's (response.created) and its message's (response.completed). */
function streamedIds(text: string): { response: string; message: string } {
  const event = (type: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`data: {"type":"${type}"`));
    assert.ok(line, text);
    return (JSON.parse(line.slice('data: '.length)) as { response: { id: string; output: { id: string }[] } }).response;
  };
  return { response: event('response.created').id, message: event('response.completed').output[0].id };
}

/**
 * Regression: "`previous_response_id` crosses projects on the Responses relay". Every project is
 * relayed with the operator's one upstream key; a key of project B that named project A's response
 * got a 200 continuing A's conversation. Every id the upstream resolves (a previous response, a
 * conversation, an input item) must be the caller's project's before anything goes upstream;
 * another project's is the 404 of an unknown id, on every instance sharing the store.
 */
function crossProjectSuite(
  name: string,
  setup: (upstreamUrl: string) => Promise<{ a: TestGateway; b: TestGateway; close: () => Promise<void> }>,
  skip: string | false = false,
) {
  describe(`regression: previous_response_id crosses projects on the Responses relay (${name})`, { skip }, () => {
    let upstream: FakeUpstream;
    /** Project A's key is used on `a`, project B's on `b` (the same instance, or two sharing PostgreSQL). */
    let a: TestGateway;
    let b: TestGateway;
    let close: () => Promise<void>;
    let keyA: string;
    let keyB: string;
    const owned = { whole: '', streamed: '', message: '', streamedMessage: '', conversation: '' };

    before(async () => {
      upstream = await startFakeUpstream();
      upstreamResponses(upstream);
      ({ a, b, close } = await setup(upstream.url));
      keyA = (await projectWithKey(a.url, MASTER, 'team-a')).key;
      keyB = (await projectWithKey(a.url, MASTER, 'team-b')).key;
      const whole = await create(a, keyA, {});
      assert.equal(whole.status, 200, whole.text);
      owned.whole = whole.body.id;
      owned.message = whole.body.output[0].id;
      owned.conversation = whole.body.conversation.id;
      const streamed = await create(a, keyA, { stream: true });
      assert.equal(streamed.status, 200, streamed.text);
      ({ response: owned.streamed, message: owned.streamedMessage } = streamedIds(streamed.text));
    });
    after(async () => {
      await close?.();
      await upstream?.close();
    });

    /** B names A's id and an id nobody was handed: the same 404 (but for the id), and the upstream is not called. */
    async function refusedLikeUnknown(body: (id: string) => Record<string, unknown>, ownedId: string, code: string, param: string) {
      const sent = upstream.requests.length;
      // Side by side: each is asked again for the store's half second before it counts as unknown.
      const [foreign, unknown] = await Promise.all([create(b, keyB, body(ownedId)), create(b, keyB, body('resp_nobody_was_handed'))]);
      assert.equal(upstream.requests.length, sent, 'nothing went upstream');
      assert.equal(foreign.status, 404, foreign.text);
      assert.deepEqual(foreign.body.error, { ...foreign.body.error, code, param, type: 'invalid_request_error' });
      assert.equal(unknown.status, 404);
      assert.equal(foreign.text.replaceAll(ownedId, '<id>'), unknown.text.replaceAll('resp_nobody_was_handed', '<id>'));
    }

    it("another project's response in previous_response_id (created whole or streamed) is the 404 of an unknown id", async () => {
      await Promise.all(
        [owned.whole, owned.streamed].flatMap((id) => [
          refusedLikeUnknown((prev) => ({ previous_response_id: prev }), id, 'previous_response_not_found', 'previous_response_id'),
          refusedLikeUnknown((prev) => ({ previous_response_id: prev, stream: true }), id, 'previous_response_not_found', 'previous_response_id'),
        ]),
      );
    });

    it("another project's conversation (either form) and items (item_reference, any input item's id) are refused the same way", async () => {
      const reference = (id: string) => ({
        input: [
          { role: 'user', content: 'hi' },
          { type: 'item_reference', id },
        ],
      });
      const replayed = (id: string) => ({ input: [{ type: 'message', id, role: 'assistant', content: [{ type: 'output_text', text: 'Hello' }] }] });
      await Promise.all([
        refusedLikeUnknown((id) => ({ conversation: id }), owned.conversation, 'conversation_not_found', 'conversation'),
        refusedLikeUnknown((id) => ({ conversation: { id } }), owned.conversation, 'conversation_not_found', 'conversation.id'),
        refusedLikeUnknown(reference, owned.message, 'item_not_found', 'input[1].id'),
        refusedLikeUnknown(reference, owned.streamedMessage, 'item_not_found', 'input[1].id'),
        refusedLikeUnknown(replayed, owned.message, 'item_not_found', 'input[0].id'),
      ]);
    });

    it('GET /v1/responses/{id} of the other project is the 404 of an unknown id', async () => {
      const [foreign, unknown] = await Promise.all([
        adminCall(b.url, keyB, 'GET', `/v1/responses/${owned.whole}`),
        adminCall(b.url, keyB, 'GET', '/v1/responses/resp_nobody_was_handed'),
      ]);
      assert.equal(foreign.status, 404);
      assert.equal(foreign.text.replaceAll(owned.whole, '<id>'), unknown.text.replaceAll('resp_nobody_was_handed', '<id>'));
    });

    it("DELETE, cancel and input_items of the other project's response reach no upstream and answer as for an unknown id", async () => {
      const sent = upstream.requests.length;
      for (const [method, path] of [
        ['DELETE', '/v1/responses/{id}'],
        ['POST', '/v1/responses/{id}/cancel'],
        ['GET', '/v1/responses/{id}/input_items'],
      ]) {
        const call = async (id: string) => {
          const res = await fetch(`${b.url}${path.replace('{id}', id)}`, { method, headers: { authorization: `Bearer ${keyB}` } });
          return { status: res.status, text: (await res.text()).replaceAll(id, '<id>') };
        };
        const [foreign, unknown] = await Promise.all([call(owned.whole), call('resp_nobody_was_handed')]);
        assert.equal(foreign.status >= 400 && foreign.status < 500, true, `${method} ${path}: ${foreign.status}`);
        assert.deepEqual(foreign, unknown, `${method} ${path}`);
      }
      assert.equal(upstream.requests.length, sent, 'nothing went upstream');
    });

    it('the owning project continues its responses, conversations and items, on this instance and on the other', async () => {
      for (const gw of [a, b]) {
        for (const body of [
          { previous_response_id: owned.whole },
          { previous_response_id: owned.streamed, stream: true },
          { conversation: owned.conversation },
          { input: [{ type: 'item_reference', id: owned.message }] },
          { input: [{ type: 'item_reference', id: owned.streamedMessage }] },
        ]) {
          const res = await create(gw, keyA, body);
          assert.equal(res.status, 200, `${JSON.stringify(body)}: ${res.text}`);
          const sent = upstream.requests.at(-1)?.json as Record<string, unknown>;
          for (const [field, value] of Object.entries(body)) assert.deepEqual(sent[field], value);
        }
      }
    });

    it('a response created with store: false still hands its ids to its project alone (only the ids are kept)', async () => {
      const unstored = await create(a, keyA, { store: false });
      assert.equal(unstored.status, 200);
      assert.equal((await create(b, keyA, { previous_response_id: unstored.body.id })).status, 200);
      await refusedLikeUnknown((prev) => ({ previous_response_id: prev }), unstored.body.id, 'previous_response_not_found', 'previous_response_id');
      assert.equal((await adminCall(a.url, keyA, 'GET', `/v1/responses/${unstored.body.id}`)).status, 404);
    });

    it('the master key, which reads every project, names any id as before', async () => {
      const res = await create(b, MASTER, { previous_response_id: owned.whole });
      assert.equal(res.status, 200, res.text);
      const sent = upstream.requests.at(-1)?.json as Record<string, unknown> | undefined;
      assert.equal(sent?.previous_response_id, owned.whole);
    });
  });
}

const gatewayConfig = (upstreamUrl: string, store: Record<string, unknown>) => ({
  ...upstreamConfig(upstreamUrl, { responses_api: true }),
  auth: { master_key: MASTER, key_pepper: 'relay-projects-pepper' },
  store,
});

crossProjectSuite('one instance', async (url) => {
  const gw = await startGateway(gatewayConfig(url, {}));
  return { a: gw, b: gw, close: () => gw.close() };
});

let schema: TestSchema | undefined;
crossProjectSuite(
  'two instances sharing PostgreSQL',
  async (url) => {
    schema = await createTestSchema();
    const a = await startGateway(gatewayConfig(url, { database_url: schema.url }));
    const b = await startGateway(gatewayConfig(url, { database_url: schema.url }));
    return {
      a,
      b,
      close: async () => {
        await a.close();
        await b.close();
        await schema?.drop();
      },
    };
  },
  noPostgres,
);
