import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { parseSse, rawStream, requestRecord, startGateway, type TestGateway, upstreamConfig } from '../helpers/gateway.ts';
import { createTestSchema, noPostgres, type TestSchema } from '../helpers/postgres.ts';

/**
 * The reviewer's reproductions of "one bad record stops the ledger", against both engines: a
 * value the database refuses (a NUL in a model name, a token count of [] / 1.5 / 1e308 / 2^53)
 * used to fail its batch forever, so no request after it got a row.
 */

const chunk = (body: Record<string, unknown>) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', ...body })}\n\n`;

/** A whole upstream stream whose usage chunk carries `usage` exactly as given. */
function streamWithUsage(usage: unknown): string {
  return (
    chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' }, finish_reason: null }] }) +
    chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) +
    chunk({ choices: [], usage }) +
    'data: [DONE]\n\n'
  );
}

/** The upstream answers with the usage named in the last user message (JSON), else a good one. */
function replyWithUsage(upstream: FakeUpstream): void {
  upstream.reply((req) => {
    const messages = (req.json as { messages: { content: string }[] }).messages;
    const text = messages.at(-1)?.content ?? '';
    if (text === 'error-with-nul') {
      const error = { error: { message: 'upstream says \u0000 no', type: 'invalid_request_error', code: null } };
      return { status: 400, headers: { 'content-type': 'application/json' }, body: JSON.stringify(error) };
    }
    const usage = text.startsWith('usage:') ? JSON.parse(text.slice(6)) : { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 };
    return { body: streamWithUsage(usage) };
  });
}

async function chat(gw: TestGateway, model: string, content: string, status = 200) {
  const res = await rawStream(gw.url, {
    model,
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: 'user', content }],
  });
  assert.equal(res.status, status, res.text);
  return { id: res.headers.get('x-request-id') ?? '', text: res.text };
}

async function responses(gw: TestGateway, model: string, content: string, status = 200) {
  const res = await rawStream(gw.url, { model, input: content, stream: true }, {}, '/v1/responses');
  assert.equal(res.status, status, res.text);
  return { id: res.headers.get('x-request-id') ?? '' };
}

const ENGINES = [
  { name: 'SQLite', skip: false as const, store: async () => ({ config: { path: ':memory:' }, drop: async () => {} }) },
  {
    name: 'PostgreSQL',
    skip: noPostgres,
    store: async () => {
      const schema: TestSchema = await createTestSchema();
      return { config: { database_url: schema.url }, drop: () => schema.drop() };
    },
  },
];

for (const engine of ENGINES) {
  describe(`ledger with bad values on ${engine.name}`, { skip: engine.skip }, () => {
    let upstream: FakeUpstream;
    let gw: TestGateway;
    let drop: () => Promise<void>;
    before(async () => {
      upstream = await startFakeUpstream();
      replyWithUsage(upstream);
      const store = await engine.store();
      drop = store.drop;
      gw = await startGateway({ ...upstreamConfig(upstream.url), store: store.config, ledger: { flush_interval_ms: 5 } });
    });
    after(async () => {
      await gw?.close();
      await upstream?.close();
      await drop?.();
    });

    /** 20 good requests after the bad one: every one of them gets its row. */
    async function assertLedgerKeepsGoing(badId: string): Promise<Record<string, any>> {
      const later = [];
      for (let i = 0; i < 20; i++) later.push((await chat(gw, 'up/gpt-4o-mini', `after ${i}`)).id);
      for (const id of later) assert.equal((await requestRecord(gw, id)).request_id, id);
      const list = await fetch(`${gw.url}/v1/requests?limit=1000`);
      assert.equal(list.status, 200, await list.clone().text());
      return requestRecord(gw, badId);
    }

    // sluice refuses a model id with a control character (400 naming model), but the refused
    // request still gets its row, and that row holds the name as the client sent it.
    it('one bad record does not stop the ledger: a NUL in the model name (chat)', async () => {
      const { id } = await chat(gw, 'up/gpt\u0000-evil', 'hello', 400);
      const row = await assertLedgerKeepsGoing(id);
      assert.equal(row.requested_model, 'up/gpt\uFFFD-evil');
      assert.equal(row.outcome, 'error');
    });

    it('one bad record does not stop the ledger: a NUL in the model name (responses)', async () => {
      const { id } = await responses(gw, 'up/gpt\u0000-evil', 'hello', 400);
      const row = await assertLedgerKeepsGoing(id);
      assert.equal(row.surface, 'responses');
      assert.equal(row.requested_model, 'up/gpt\uFFFD-evil');
    });

    it('one bad record does not stop the ledger: a NUL in an upstream error message', async () => {
      const { id } = await chat(gw, 'up/gpt-4o-mini', 'error-with-nul', 400);
      const row = await assertLedgerKeepsGoing(id);
      assert.match(row.error.message, /upstream says \uFFFD no/);
    });

    for (const [label, promptTokens, stored] of [
      ['[]', [], 0],
      ['1.5', 1.5, 1],
      ['1e308', 1e308, 2 ** 31 - 1],
      ['2^53', 2 ** 53, 2 ** 31 - 1],
    ] as const) {
      it(`one bad record does not stop the ledger: an upstream prompt_tokens of ${label}`, async () => {
        const { id, text } = await chat(
          gw,
          'up/gpt-4o-mini',
          `usage:${JSON.stringify({ prompt_tokens: promptTokens, completion_tokens: 2, total_tokens: 3 })}`,
        );
        // The client sees a number too, never what the upstream sent.
        const usageFrame = parseSse(text).frames.find((f) => f.data.includes('"usage":{'));
        const usage = JSON.parse(usageFrame?.data ?? '{}').usage;
        assert.deepEqual(usage, { prompt_tokens: stored, completion_tokens: 2, total_tokens: stored + 2 });
        const row = await assertLedgerKeepsGoing(id);
        assert.equal(row.usage.input_tokens, stored);
        assert.equal(row.usage.output_tokens, 2);
      });
    }

    it('one bad record does not stop the ledger: a string count reaches the client as a number ("12" is 0, not "122")', async () => {
      const { text } = await chat(gw, 'up/gpt-4o-mini', `usage:${JSON.stringify({ prompt_tokens: '12', completion_tokens: 2, total_tokens: 14 })}`);
      assert.ok(text.includes('"usage":{"prompt_tokens":0,"completion_tokens":2,"total_tokens":2}'), text);
    });

    it('one bad record does not stop the ledger: the NUL names were sanitized before the store, nothing dropped', () => {
      const stats = gw.gateway.context.accounting.ledger?.stats;
      assert.equal(stats?.sanitized, 3);
      assert.equal(stats?.dropped, 0);
      assert.equal(stats?.setAside, 0);
    });
  });
}
