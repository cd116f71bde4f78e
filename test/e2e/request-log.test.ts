import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { createTestSchema, noPostgres } from '../helpers/postgres.ts';

const KEY = 'sk-request-log';
const auth = { authorization: `Bearer ${KEY}` };

/** The request log over HTTP, on one store: its parameters are checked the same on every engine. */
function requestLogSuite(
  name: string,
  store: () => Promise<{ config: Record<string, unknown>; drop(): Promise<void> }>,
  skip: string | false = false,
) {
  describe(`the request log API: ${name}`, { skip }, () => {
    let gw: TestGateway;
    let drop = async () => {};

    before(async () => {
      const site = await store();
      drop = () => site.drop();
      gw = await startGateway({
        auth: { master_key: KEY },
        ledger: { flush_interval_ms: 10 },
        store: site.config,
        model_list: [{ model_name: 'fast', model: 'mock/echo' }],
      });
    });
    after(async () => {
      await gw?.close();
      await drop();
    });

    const get = async (path: string) => {
      const res = await fetch(`${gw.url}${path}`, { headers: auth });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    async function chat(model: string): Promise<string> {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
      });
      await res.text();
      return res.headers.get('x-request-id') ?? '';
    }

    it('GET /v1/requests?project=team-a silently ignored the parameter and listed every project: an unknown query parameter is a 400 naming it', async () => {
      await chat('mock/tools'); // a record of no project, which the ignored filter listed
      const { status, body } = await get('/v1/requests?project=team-a');
      assert.equal(status, 400);
      assert.equal(body.error.param, 'project');
      assert.equal(body.error.code, 'invalid_request');
      assert.match(body.error.message, /^Unknown query parameter "project" \(did you mean "project_id"\?\): it takes model, provider, /);
      // The parameter it meant filters as it should.
      const meant = await get('/v1/requests?project_id=team-a');
      assert.equal(meant.status, 200);
      assert.deepEqual(meant.body.data, []);
    });

    it('answers a bad parameter with a 400 naming it, never a 500 or a silent first page', async () => {
      const bad: [string, string][] = [
        ['/v1/requests?model=mock%00echo', 'model'],
        ['/v1/requests?provider=%00', 'provider'],
        ['/v1/requests?outcome=fine', 'outcome'],
        ['/v1/requests?since=1.5', 'since'],
        ['/v1/requests?since=99999999999999999999', 'since'],
        ['/v1/requests?until=8640000000000001', 'until'],
        ['/v1/requests?until=1e12', 'until'],
        ['/v1/requests?since=yesterday', 'since'],
        ['/v1/requests?limit=2.5', 'limit'],
        ['/v1/requests?cursor=not-a-cursor', 'cursor'],
        ['/v1/requests?cursor=', 'cursor'],
        ['/v1/requests?order=asc&after=not-a-cursor', 'after'],
        ['/v1/requests?after=d:1', 'after'],
        ['/v1/requests?order=asc&cursor=abc', 'cursor'],
        ['/v1/requests?order=sideways', 'order'],
        ['/v1/requests/%E0%A4%A', 'request_id'],
        ['/v1/requests/abc%00def', 'request_id'],
        ['/v1/responses/%ZZ', 'response_id'],
      ];
      for (const [path, param] of bad) {
        const { status, body } = await get(path);
        assert.equal(status, 400, path);
        assert.equal(body.error.type, 'invalid_request_error', path);
        assert.equal(body.error.param, param, path);
      }
      for (const path of ['/v1/requests?since=2026-01-01', '/v1/requests?since=2026-01-01T10:00:00.123Z&until=1900000000000']) {
        assert.equal((await get(path)).status, 200, path);
      }
    });

    it('filters by the model name the client used: an alias or provider/model', async () => {
      const direct = await chat('mock/echo');
      const alias = await chat('fast');
      await chat('mock/tools');
      const ids = async (model: string) =>
        (await get(`/v1/requests?model=${encodeURIComponent(model)}`)).body.data.map((r: { request_id: string }) => r.request_id);
      assert.deepEqual(await ids('mock/echo'), [alias, direct]);
      assert.deepEqual(await ids('fast'), [alias]);
      assert.deepEqual(await ids('echo'), [alias, direct]);
    });

    it('records the model a refused body asked for, so that the log shows it and its filter finds it', async () => {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ model: 'mock/echo', messages: 'not a list' }),
      });
      assert.equal(res.status, 400);
      await res.text();
      const id = res.headers.get('x-request-id') ?? '';
      let record = await get(`/v1/requests/${id}`);
      for (let polls = 0; polls < 100 && record.status !== 200; polls++) {
        await new Promise((r) => setTimeout(r, 20));
        record = await get(`/v1/requests/${id}`);
      }
      assert.equal(record.body.requested_model, 'mock/echo');
      assert.equal(record.body.error.code, 'invalid_request');
      const listed = (await get('/v1/requests?model=mock%2Fecho&outcome=error')).body.data;
      assert.ok(listed.some((r: { request_id: string }) => r.request_id === id));
    });

    it('lists in write order after a follow_cursor, continuing with next_cursor', async () => {
      // A record is written once settled, and mock/error's output is counted locally: the token
      // counter loads on its first use (~0.3 s), which would write that record after a later
      // request's. Warmed first, the three are written in the order they end.
      // Each request's row is waited for before the next request: on a loaded machine an error's
      // record (its output counted in the counter's worker) can otherwise be written after the
      // next request's, and the order asserted is the order written.
      const stored = async (id: string) => {
        for (let polls = 0; polls < 100 && (await get(`/v1/requests/${id}`)).status !== 200; polls++) {
          await new Promise((r) => setTimeout(r, 20));
        }
        return id;
      };
      await stored(await chat('mock/error'));
      const { body: first } = await get('/v1/requests?limit=1');
      assert.equal(typeof first.follow_cursor, 'string');
      const written = [await stored(await chat('mock/echo')), await stored(await chat('mock/error')), await stored(await chat('mock/echo'))];
      const seen: string[] = [];
      let after = first.follow_cursor as string;
      // Rows of this file's earlier requests still in flight when the cursor was taken come after it too.
      const all = () => written.every((id) => seen.includes(id));
      for (let polls = 0; polls < 1500 && !all(); polls++) {
        const { status, body } = await get(`/v1/requests?order=asc&limit=2&after=${after}`);
        assert.equal(status, 200);
        seen.push(...body.data.map((r: { request_id: string }) => r.request_id));
        assert.equal(typeof body.next_cursor, 'string');
        after = body.next_cursor;
        // PostgreSQL shows a row once older transactions on the server have ended: poll again.
        if (!body.has_more) await new Promise((r) => setTimeout(r, 20));
      }
      assert.deepEqual(
        seen.filter((id) => written.includes(id)),
        written,
      );
    });
  });
}

requestLogSuite('embedded SQLite', async () => ({ config: { path: ':memory:' }, drop: async () => {} }));

requestLogSuite(
  'PostgreSQL',
  async () => {
    const schema = await createTestSchema();
    return { config: { database_url: schema.url }, drop: schema.drop };
  },
  noPostgres,
);
