import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MASTER } from '../../admission/admission.ts';
import { errors } from '../../errors/catalog.ts';
import { isNormalClose, type SessionFacts, sessionRecord } from './session-record.ts';

const facts: SessionFacts = {
  requestId: 'req_rt',
  caller: { ...MASTER, keyId: 'k1', projectId: 'p1' },
  provider: 'openai',
  model: 'gpt-realtime',
  requestedModel: 'openai/gpt-realtime',
  startedAt: 1_000,
  endedAt: 61_000,
  usage: { inputTokens: 30, outputTokens: 20, cachedInputTokens: 4, audioInputTokens: 10, audioOutputTokens: 5, responses: 2 },
  costUsd: 0.0012,
  priceKnown: true,
  upstreamStatus: 101,
  closedBy: 'client',
  error: undefined,
};

test('a session closed by the client is one ok row with the summed usage, cost and duration', () => {
  const record = sessionRecord(facts);
  assert.equal(record.surface, 'realtime');
  assert.equal(record.outcome, 'ok');
  assert.equal(record.finishReason, 'client_closed');
  assert.equal(record.latencyMs, 60_000);
  assert.deepEqual(
    [record.inputTokens, record.outputTokens, record.cachedInputTokens, record.audioInputTokens, record.audioOutputTokens],
    [30, 20, 4, 10, 5],
  );
  assert.equal(record.costUsd, 0.0012);
  assert.equal(record.keyId, 'k1');
  assert.equal(record.upstreamStatus, 101);
});

test('an upstream failure is an error row; a shutdown a cancelled one', () => {
  const failed = sessionRecord({ ...facts, closedBy: 'upstream', error: errors.connection('openai', 'closed 1011') });
  assert.equal(failed.outcome, 'error');
  assert.equal(failed.errorCode, 'upstream_connection_error');
  assert.equal(failed.finishReason, 'upstream_closed');
  const stopped = sessionRecord({ ...facts, closedBy: 'shutdown', error: errors.shuttingDown() });
  assert.equal(stopped.outcome, 'cancelled');
  assert.equal(stopped.finishReason, 'shutdown');
});

test('normal close codes', () => {
  assert.ok(isNormalClose(1000) && isNormalClose(1001) && isNormalClose(1005));
  assert.ok(!isNormalClose(1006) && !isNormalClose(1011));
});
