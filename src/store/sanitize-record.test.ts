import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ledgerRecord } from '../../test/helpers/ledger-records.ts';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import { sanitizeRecord, setAsideRecord, TEXT_CAPS } from './sanitize-record.ts';

describe('sanitizeRecord', () => {
  it('returns a good record unchanged, with nothing to report', () => {
    const good = ledgerRecord({ prompt: 'héllo 👋', errorMessage: 'fine' });
    const { record, changed } = sanitizeRecord(good);
    assert.deepEqual(record, good);
    assert.deepEqual(changed, []);
  });

  it('one bad record does not stop the ledger: NUL and lone surrogates become U+FFFD, long text is capped', () => {
    const { record, changed } = sanitizeRecord(
      ledgerRecord({
        model: 'gpt\0-4o',
        requestedModel: 'up/gpt\0',
        errorMessage: `bad \uD800 half ${'x'.repeat(10_000)}`,
        completion: 'ok \uDC00',
        provider: 'p'.repeat(1000),
      }),
    );
    assert.equal(record.model, 'gpt\uFFFD-4o');
    assert.equal(record.requestedModel, 'up/gpt\uFFFD');
    assert.ok(record.errorMessage?.startsWith('bad \uFFFD half x'));
    assert.equal(record.errorMessage?.length, TEXT_CAPS.errorMessage);
    assert.equal(record.completion, 'ok \uFFFD');
    assert.equal(record.provider.length, TEXT_CAPS.name);
    assert.deepEqual(changed, ['provider', 'model', 'requestedModel', 'errorMessage', 'completion']);
  });

  it('one bad record does not stop the ledger: counts, times and flags of the wrong type or size become safe values', () => {
    const bad = {
      ...ledgerRecord(),
      inputTokens: [],
      outputTokens: 2 ** 53,
      cachedInputTokens: 1.5,
      cacheWriteTokens: -4,
      reasoningTokens: '7',
      costUsd: Number.NaN,
      ttftMs: 1e12,
      latencyMs: -3,
      upstreamStatus: '200',
      streamed: 'yes',
      createdAt: 'yesterday',
      keyId: 42,
    } as unknown as LedgerRecord;
    const before = Date.now();
    const { record, changed } = sanitizeRecord(bad);
    assert.deepEqual(
      {
        inputTokens: record.inputTokens,
        outputTokens: record.outputTokens,
        cachedInputTokens: record.cachedInputTokens,
        cacheWriteTokens: record.cacheWriteTokens,
        reasoningTokens: record.reasoningTokens,
        costUsd: record.costUsd,
        ttftMs: record.ttftMs,
        latencyMs: record.latencyMs,
        upstreamStatus: record.upstreamStatus,
        streamed: record.streamed,
        keyId: record.keyId,
      },
      {
        inputTokens: 0,
        outputTokens: 2 ** 31 - 1,
        cachedInputTokens: 1,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        costUsd: 0,
        ttftMs: 2 ** 31 - 1,
        latencyMs: 0,
        upstreamStatus: null,
        streamed: false,
        keyId: '',
      },
    );
    assert.ok(record.createdAt >= before);
    assert.equal(changed.length, 12);
  });

  it('fills what a journal line read back may lack', () => {
    const { record } = sanitizeRecord({ requestId: 'r1' } as unknown as LedgerRecord);
    assert.equal(record.requestId, 'r1');
    assert.equal(record.model, '');
    assert.equal(record.ttftMs, null);
    assert.equal(record.prompt, null);
    assert.equal(record.inputTokens, 0);
  });
});

describe('setAsideRecord', () => {
  it('keeps id, time, counts and outcome; reduces text to short ASCII, drops content, gives the reason', () => {
    const row = ledgerRecord({ model: 'modèle-𝔁', errorMessage: 'long', prompt: 'p', completion: 'c', outputTokens: 99 });
    const safe = setAsideRecord(row, 'value too long for type character varying(8)');
    assert.equal(safe.requestId, row.requestId);
    assert.equal(safe.createdAt, row.createdAt);
    assert.equal(safe.outputTokens, 99);
    assert.equal(safe.model, 'mod?le-??');
    assert.equal(safe.prompt, null);
    assert.equal(safe.completion, null);
    assert.equal(safe.errorMessage, 'set aside by the ledger: value too long for type character varying(8)');
  });
});
