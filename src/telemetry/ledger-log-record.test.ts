import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SeverityNumber } from '@opentelemetry/api';
import { ledgerRecord } from '../../test/helpers/ledger-records.ts';
import { LEDGER_EVENT, ledgerLogRecord } from './ledger-log-record.ts';

describe('ledgerLogRecord', () => {
  it('maps a streamed chat row to the GenAI attributes and sluice.*', () => {
    const log = ledgerLogRecord(ledgerRecord({ requestId: 'r1', projectId: 'p1', keyId: 'k1', cachedInputTokens: 4, reasoningTokens: 2 }), false);
    assert.equal(log.eventName, LEDGER_EVENT);
    assert.equal(log.timestamp, 1_760_000_000_000);
    assert.equal(log.severityNumber, SeverityNumber.INFO);
    assert.equal(log.body, 'chat openai/gpt-4o-mini ok');
    assert.deepEqual(log.attributes, {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'openai/gpt-4o-mini',
      'gen_ai.request.stream': true,
      'gen_ai.response.model': 'gpt-4o-mini',
      'gen_ai.response.id': 'chatcmpl-r1',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.response.time_to_first_chunk': 0.12,
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 7,
      'gen_ai.usage.cache_read.input_tokens': 4,
      'gen_ai.usage.cache_creation.input_tokens': 0,
      'gen_ai.usage.reasoning.output_tokens': 2,
      'sluice.request_id': 'r1',
      'sluice.surface': 'chat',
      'sluice.outcome': 'ok',
      'sluice.cost_usd': 0.000006,
      'sluice.price_known': true,
      'sluice.usage_source': 'provider',
      'sluice.latency_ms': 480,
      'sluice.project_id': 'p1',
      'sluice.key_id': 'k1',
      'sluice.ttft_ms': 120,
      'sluice.overhead_ms': 0.42,
      'sluice.upstream_status': 200,
    });
  });

  it('marks a failed row: error.type, the codes, WARN, and no response id before any answer', () => {
    const log = ledgerLogRecord(
      ledgerRecord({
        outcome: 'error',
        errorType: 'upstream_error',
        errorCode: 'upstream_unavailable',
        ttftMs: null,
        finishReason: null,
        upstreamStatus: 503,
        attempts: [{ provider: 'a', model: 'm', status: 503, errorCode: 'upstream_unavailable', fallbackReason: null, latencyMs: 3 }],
      }),
      false,
    );
    const a = log.attributes ?? {};
    assert.equal(log.severityNumber, SeverityNumber.WARN);
    assert.equal(a['error.type'], 'upstream_unavailable');
    assert.equal(a['sluice.error_code'], 'upstream_unavailable');
    assert.equal(a['sluice.error_type'], 'upstream_error');
    assert.equal(a['sluice.attempts'], 1);
    for (const absent of ['gen_ai.response.id', 'gen_ai.response.finish_reasons', 'gen_ai.response.time_to_first_chunk', 'sluice.ttft_ms']) {
      assert.equal(a[absent], undefined, absent);
    }
  });

  it('names the operation embeddings, the provider by its conventional name, and gives no response id off chat', () => {
    const a = ledgerLogRecord(ledgerRecord({ surface: 'embeddings', provider: 'bedrock', streamed: false }), false).attributes ?? {};
    assert.equal(a['gen_ai.operation.name'], 'embeddings');
    assert.equal(a['gen_ai.provider.name'], 'aws.bedrock');
    assert.equal(a['gen_ai.response.id'], undefined);
    assert.equal(a['gen_ai.response.time_to_first_chunk'], undefined, 'not streamed');
    const messages = ledgerLogRecord(ledgerRecord({ surface: 'messages' }), false).attributes ?? {};
    assert.equal(messages['gen_ai.response.id'], undefined, 'a relayed Messages id is the upstream one');
  });

  it('carries the stored prompt and completion only when asked to', () => {
    const row = ledgerRecord({ prompt: 'the prompt', completion: 'the answer' });
    const without = ledgerLogRecord(row, false).attributes ?? {};
    assert.equal(without['sluice.prompt'], undefined);
    assert.equal(without['sluice.completion'], undefined);
    const withContent = ledgerLogRecord(row, true).attributes ?? {};
    assert.equal(withContent['sluice.prompt'], 'the prompt');
    assert.equal(withContent['sluice.completion'], 'the answer');
  });
});
