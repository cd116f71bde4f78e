import assert from 'node:assert/strict';
import { once } from 'node:events';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { type OneResponse, openResponse } from '../../test/helpers/one-response.ts';
import { errors } from '../errors/catalog.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { RequestScope } from './request-scope.ts';

const reasonOf = (scope: RequestScope) => scope.signal.reason as GatewayError;

describe('RequestScope', () => {
  let one: OneResponse;
  beforeEach(async () => {
    one = await openResponse();
  });
  afterEach(async () => {
    mock.timers.reset();
    await one.close();
  });

  it('the deadline aborts the signal with a timeout error naming it', () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    const scope = new RequestScope(one.res, { deadlineMs: 30_000, scopes: new Set() });
    mock.timers.tick(29_999);
    assert.equal(scope.signal.aborted, false);
    mock.timers.tick(1);
    assert.equal(scope.signal.aborted, true);
    assert.ok(reasonOf(scope) instanceof GatewayError);
    assert.deepEqual(
      [reasonOf(scope).code, reasonOf(scope).status, reasonOf(scope).message],
      ['timeout', 504, 'Request exceeded the deadline of 30s.'],
    );
    scope.dispose();
  });

  it("a tier's deadline error is the reason when it gives one; 0 is no deadline", () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    const tier = new GatewayError({ code: 'timeout', status: 504, type: 'timeout_error', message: 'tier gold: 5s' });
    const scope = new RequestScope(one.res, { deadlineMs: 5_000, deadlineError: () => tier, scopes: new Set() });
    const none = new RequestScope(one.res, { deadlineMs: 0, scopes: new Set() });
    mock.timers.tick(10 * 24 * 3600 * 1000);
    assert.equal(scope.signal.reason, tier);
    assert.equal(none.signal.aborted, false);
    scope.dispose();
    none.dispose();
  });

  it('a client that closes the connection aborts it with `cancelled`', async () => {
    const scope = new RequestScope(one.res, { deadlineMs: 0, scopes: new Set() });
    one.disconnect();
    await once(scope.signal, 'abort');
    assert.deepEqual([reasonOf(scope).code, reasonOf(scope).status], ['cancelled', 499]);
    scope.dispose();
  });

  it('`drain`: a client that closes the connection aborts nothing; clientLeft says `cancelled`', async () => {
    const scope = new RequestScope(one.res, { deadlineMs: 0, onDisconnect: 'drain', scopes: new Set() });
    one.disconnect();
    await once(one.res, 'close');
    assert.equal(scope.signal.aborted, false);
    assert.deepEqual([scope.clientLeft?.code, scope.clientLeft?.status], ['cancelled', 499]);
    scope.dispose();
  });

  it('`drain`: the deadline still aborts the signal', () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    const scope = new RequestScope(one.res, { deadlineMs: 1_000, onDisconnect: 'drain', scopes: new Set() });
    mock.timers.tick(1_000);
    assert.equal(reasonOf(scope).code, 'timeout');
    scope.dispose();
  });

  it('a response that finished does not abort it when its connection closes', async () => {
    const scope = new RequestScope(one.res, { deadlineMs: 0, scopes: new Set() });
    one.res.end('ok');
    assert.equal(await one.body(), 'ok');
    if (!one.res.closed) await once(one.res, 'close');
    one.disconnect();
    assert.equal(scope.signal.aborted, false);
    scope.dispose();
  });

  it('the first abort wins: its reason stays', () => {
    const scope = new RequestScope(one.res, { deadlineMs: 0, scopes: new Set() });
    const first = errors.shuttingDown();
    scope.abort(first);
    scope.abort(errors.cancelled('later'));
    assert.equal(scope.signal.reason, first);
    scope.dispose();
  });

  it('dispose clears the deadline, stops listening to the client and leaves the set of open scopes', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    const scopes = new Set<RequestScope>();
    const listeners = one.res.listenerCount('close');
    const scope = new RequestScope(one.res, { deadlineMs: 1_000, scopes });
    assert.deepEqual([...scopes], [scope]);
    assert.equal(one.res.listenerCount('close'), listeners + 1);
    scope.dispose();
    assert.equal(scopes.size, 0);
    assert.equal(one.res.listenerCount('close'), listeners);
    mock.timers.tick(2_000);
    mock.timers.reset();
    one.disconnect();
    await once(one.res, 'close');
    assert.equal(scope.signal.aborted, false);
  });

  describe('upstreamResponded', () => {
    it("keeps the upstream's request id and gives it to the client while no byte was sent", async () => {
      const scope = new RequestScope(one.res, { deadlineMs: 0, scopes: new Set() });
      scope.upstreamResponded({ 'request-id': 'req_011CT' });
      assert.equal(scope.upstreamRequestId, 'req_011CT');
      one.res.end();
      assert.equal((await one.response).headers['x-upstream-request-id'], 'req_011CT');
      scope.dispose();
    });

    it('x-generation-id first, then x-request-id, request-id, x-amzn-requestid; after the headers, the ledger only', async () => {
      const scope = new RequestScope(one.res, { deadlineMs: 0, scopes: new Set() });
      scope.upstreamResponded({ 'x-request-id': 'cf-ray-like', 'x-generation-id': 'gen-1773679501-1I8v' });
      assert.equal(scope.upstreamRequestId, 'gen-1773679501-1I8v');
      scope.upstreamResponded({ 'x-amzn-requestid': 'amzn', 'request-id': 'anthropic', 'x-request-id': 'openai' });
      assert.equal(scope.upstreamRequestId, 'openai');
      scope.upstreamResponded({ 'x-amzn-requestid': 'amzn' });
      assert.equal(scope.upstreamRequestId, 'amzn');
      one.res.writeHead(200).write('x');
      scope.upstreamResponded({ 'x-request-id': 'late' });
      assert.equal(scope.upstreamRequestId, 'late');
      one.res.end();
      assert.equal((await one.response).headers['x-upstream-request-id'], 'amzn');
      scope.dispose();
    });

    it('an id that is not visible ASCII, or longer than 256, is neither echoed nor kept', async () => {
      const scope = new RequestScope(one.res, { deadlineMs: 0, scopes: new Set() });
      for (const id of ['', 'has space', 'bad\u00e9', 'x'.repeat(257)]) scope.upstreamResponded({ 'x-request-id': id });
      assert.equal(scope.upstreamRequestId, undefined);
      scope.upstreamResponded({ 'x-request-id': 'x'.repeat(256) });
      assert.equal(scope.upstreamRequestId, 'x'.repeat(256));
      one.res.end();
      await one.response;
      scope.dispose();
    });
  });
});
