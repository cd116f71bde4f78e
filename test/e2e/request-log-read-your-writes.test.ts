import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { rawStream, startGateway, type TestGateway, upstreamConfig } from '../helpers/gateway.ts';
import { recordedFrames, streamRequest } from './faults-support.ts';

/**
 * Regression: "a lookup right after a stream can miss its row": 7 of 10 GET /v1/requests/{id}
 * right after a failed stream answered 404 (the row arrived 500 ms later). A request must be in
 * the request log as soon as its response has ended, on the instance that served it and on any
 * other that shares its store.
 */
describe('request log: read your writes', () => {
  let upstream: FakeUpstream;
  let dir: string;
  let a: TestGateway;
  let b: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    dir = mkdtempSync(join(tmpdir(), 'sluice-ryw-'));
    // Two instances on one store; a long flush interval makes the race the bug was about certain.
    const config = { ...upstreamConfig(upstream.url), store: { path: join(dir, 'sluice.db') }, ledger: { flush_interval_ms: 500 } };
    a = await startGateway(config);
    b = await startGateway(config);
  });
  after(async () => {
    await a.close();
    await b.close();
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const lookup = (gw: TestGateway, id: string) =>
    fetch(`${gw.url}/v1/requests/${id}`).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, any> }));

  it('10 of 10 lookups right after a failed stream find the row (no usage reported: the usage is still being counted)', async () => {
    const frames = recordedFrames();
    for (let i = 0; i < 10; i++) {
      // Role and two content frames, then the connection is reset: no usage, no finish.
      upstream.reply({ pieces: frames.slice(0, 3), after: 'reset' });
      const streamed = await rawStream(a.url, streamRequest);
      const id = streamed.headers.get('x-request-id') ?? '';
      assert.match(streamed.text, /"error"/);
      const found = await lookup(a, id);
      assert.equal(found.status, 200, `lookup ${i}: ${JSON.stringify(found.body)}`);
      assert.equal(found.body.outcome, 'error');
      assert.equal(found.body.error.code, 'upstream_connection_error');
    }
  });

  it('a lookup on another instance right after the stream ended finds the row', async () => {
    upstream.reply({ pieces: recordedFrames() });
    const streamed = await rawStream(a.url, streamRequest);
    const id = streamed.headers.get('x-request-id') ?? '';
    const found = await lookup(b, id);
    assert.equal(found.status, 200, JSON.stringify(found.body));
    assert.equal(found.body.outcome, 'ok');
  });

  it('an id sluice never issued is a 404 at once, a well-formed unknown one after a bounded wait', async () => {
    let started = Date.now();
    assert.equal((await lookup(a, 'not-an-id')).status, 404);
    assert.ok(Date.now() - started < 500);
    started = Date.now();
    assert.equal((await lookup(a, '00000000AAAAAAAAAAAA')).status, 404);
    assert.ok(Date.now() - started < 3_000);
  });
});
