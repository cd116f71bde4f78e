import { type Attributes, type LogRecord, SeverityNumber } from '@opentelemetry/api';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import { genAiOperation } from './genai-operation.ts';
import { providerName } from './genai-provider.ts';

/** The event name of every exported ledger row (docs/operations/analytics-export.md). */
export const LEDGER_EVENT = 'sluice.request';

/**
 * A ledger row as an OpenTelemetry log record: the GenAI semantic conventions' attributes where
 * they name the value, sluice's own under `sluice.`. Absent values are left out rather than
 * sent empty. The stored prompt and completion go in only with `content` (the operator asked
 * for them twice: ledger.store_content and ledger.export.content).
 */
export function ledgerLogRecord(record: LedgerRecord, content: boolean): LogRecord {
  const operation = genAiOperation(record.surface);
  const failed = record.outcome === 'error' || record.outcome === 'interrupted';
  return {
    eventName: LEDGER_EVENT,
    timestamp: record.createdAt,
    severityNumber: failed ? SeverityNumber.WARN : SeverityNumber.INFO,
    severityText: failed ? 'WARN' : 'INFO',
    body: `${operation} ${record.requestedModel} ${record.outcome}`,
    attributes: { ...genAiAttributes(record, operation), ...sluiceAttributes(record, content) },
  };
}

function genAiAttributes(record: LedgerRecord, operation: string): Attributes {
  const a: Attributes = {
    'gen_ai.operation.name': operation,
    'gen_ai.request.model': record.requestedModel,
    'gen_ai.request.stream': record.streamed,
    'gen_ai.usage.input_tokens': record.inputTokens,
    'gen_ai.usage.output_tokens': record.outputTokens,
    'gen_ai.usage.cache_read.input_tokens': record.cachedInputTokens,
    'gen_ai.usage.cache_creation.input_tokens': record.cacheWriteTokens,
    'gen_ai.usage.reasoning.output_tokens': record.reasoningTokens,
  };
  if (record.provider) a['gen_ai.provider.name'] = providerName(record.provider);
  if (record.model) a['gen_ai.response.model'] = record.model;
  if (record.finishReason) a['gen_ai.response.finish_reasons'] = [record.finishReason];
  const id = responseId(record);
  if (id) a['gen_ai.response.id'] = id;
  if (record.streamed && record.ttftMs !== null) a['gen_ai.response.time_to_first_chunk'] = record.ttftMs / 1000;
  if (record.audioInputTokens != null) a['gen_ai.usage.audio.input_tokens'] = record.audioInputTokens;
  if (record.audioOutputTokens != null) a['gen_ai.usage.audio.output_tokens'] = record.audioOutputTokens;
  if (record.outcome !== 'ok') a['error.type'] = record.errorCode ?? record.outcome;
  return a;
}

/**
 * The id the client saw. Only Chat Completions always answers with an id sluice made from the
 * request id; the Responses and Messages surfaces pass the upstream's own id through when they
 * relay, which the record does not keep. None when no answer was started.
 */
function responseId(record: LedgerRecord): string | undefined {
  if (record.surface !== 'chat') return undefined;
  return record.outcome === 'ok' || record.ttftMs !== null ? `chatcmpl-${record.requestId}` : undefined;
}

function sluiceAttributes(record: LedgerRecord, content: boolean): Attributes {
  const a: Attributes = {
    'sluice.request_id': record.requestId,
    'sluice.surface': record.surface,
    'sluice.outcome': record.outcome,
    'sluice.cost_usd': record.costUsd,
    'sluice.price_known': record.priceKnown,
    'sluice.usage_source': record.usageSource,
    'sluice.latency_ms': record.latencyMs,
  };
  const optional: [string, string | number | null | undefined][] = [
    ['sluice.project_id', record.projectId],
    ['sluice.key_id', record.keyId],
    ['sluice.ttft_ms', record.ttftMs],
    ['sluice.overhead_ms', record.overheadMs],
    ['sluice.error_type', record.errorType],
    ['sluice.error_code', record.errorCode],
    ['sluice.upstream_status', record.upstreamStatus],
    ['sluice.upstream_request_id', record.upstreamRequestId],
    ['sluice.billing', record.billing],
    ['sluice.attempts', record.attempts?.length],
    // The exact response cache (not the provider's prompt cache: gen_ai's cache tokens).
    ['sluice.response_cache', record.responseCache],
    ['sluice.cache_saved_usd', record.cacheSavedUsd],
    ['sluice.provider_key', record.providerKey],
  ];
  for (const [name, value] of optional) if (value !== null && value !== undefined) a[name] = value;
  // An array attribute, as OTLP carries it: a collector can group by each tag.
  if (record.tags && record.tags.length > 0) a['sluice.tags'] = record.tags;
  if (record.dryRun) a['sluice.dry_run'] = true;
  if (content && record.prompt !== null) a['sluice.prompt'] = record.prompt;
  if (content && record.completion !== null) a['sluice.completion'] = record.completion;
  return a;
}
