import type { LedgerRecord } from '../accounting/ledger-record.ts';
import { isTagList } from '../accounting/tag-rules.ts';
import { normalizeTokenCount } from '../protocol/canonical/usage.ts';

/**
 * Length caps per text column, in UTF-16 code units. Model names and ids are short in every
 * provider's catalog; an error message is a sentence or a JSON body; prompt and completion are
 * already capped by `ledger.content_max_chars`, so their cap here is only a backstop.
 */
export const TEXT_CAPS = {
  id: 128,
  name: 256,
  label: 64,
  errorMessage: 4096,
  content: 1_048_576,
} as const;

/** The largest value of an `integer` column (PostgreSQL int4): ttft_ms, latency_ms, upstream_status. */
const INT4_MAX = 2_147_483_647;

/**
 * The one step between a record and the ledger's buffer: every value in it came from a client or
 * an upstream at some point, and a value the database refuses would fail its whole batch. So:
 * - text: NUL (PostgreSQL text cannot hold it: 22021) and lone surrogates become U+FFFD, and
 *   each column is capped (TEXT_CAPS); a non-string where text belongs becomes '' (or null where
 *   the column allows it);
 * - token counts: normalizeTokenCount's rule (invalid -> 0, fractional -> floored, huge -> 2^31-1);
 * - times and statuses: integers within PostgreSQL's int4 (a negative -> 0); cost: finite and >= 0;
 * - booleans: booleans.
 * It also accepts a record of unknown shape (a journal line read back), so it never assumes types.
 * Returns the clean record and the names of the fields it had to change (empty for a good one).
 */
export function sanitizeRecord(input: LedgerRecord): { record: LedgerRecord; changed: string[] } {
  const r = input as unknown as Record<keyof LedgerRecord, unknown>;
  const record: LedgerRecord = {
    requestId: storableText(r.requestId, TEXT_CAPS.id),
    createdAt: epochMs(r.createdAt),
    keyId: nullableText(r.keyId, TEXT_CAPS.id),
    projectId: nullableText(r.projectId, TEXT_CAPS.id),
    provider: storableText(r.provider, TEXT_CAPS.name),
    model: storableText(r.model, TEXT_CAPS.name),
    requestedModel: storableText(r.requestedModel, TEXT_CAPS.name),
    surface: storableText(r.surface, TEXT_CAPS.label) as LedgerRecord['surface'],
    streamed: r.streamed === true,
    inputTokens: tokenCount(r.inputTokens),
    cachedInputTokens: tokenCount(r.cachedInputTokens),
    cacheWriteTokens: tokenCount(r.cacheWriteTokens),
    outputTokens: tokenCount(r.outputTokens),
    reasoningTokens: tokenCount(r.reasoningTokens),
    audioInputTokens: optionalCount(r.audioInputTokens),
    audioOutputTokens: optionalCount(r.audioOutputTokens),
    acceptedPredictionTokens: optionalCount(r.acceptedPredictionTokens),
    rejectedPredictionTokens: optionalCount(r.rejectedPredictionTokens),
    usageSource: storableText(r.usageSource, TEXT_CAPS.label) as LedgerRecord['usageSource'],
    costUsd: storableCost(r.costUsd),
    priceKnown: r.priceKnown === true,
    ttftMs: int4(r.ttftMs),
    latencyMs: int4(r.latencyMs) ?? 0,
    upstreamStatus: int4(r.upstreamStatus),
    outcome: storableText(r.outcome, TEXT_CAPS.label) as LedgerRecord['outcome'],
    errorType: nullableText(r.errorType, TEXT_CAPS.name),
    errorCode: nullableText(r.errorCode, TEXT_CAPS.name),
    errorMessage: nullableText(r.errorMessage, TEXT_CAPS.errorMessage),
    finishReason: nullableText(r.finishReason, TEXT_CAPS.label),
    prompt: nullableText(r.prompt, TEXT_CAPS.content),
    completion: nullableText(r.completion, TEXT_CAPS.content),
    upstreamRequestId: nullableText(r.upstreamRequestId, TEXT_CAPS.name),
    upstreamErrorType: nullableText(r.upstreamErrorType, TEXT_CAPS.name),
    upstreamErrorCode: nullableText(r.upstreamErrorCode, TEXT_CAPS.name),
    billing: nullableText(r.billing, TEXT_CAPS.label) as LedgerRecord['billing'],
    attempts: storableAttempts(r.attempts),
    overheadMs: storableOverhead(r.overheadMs),
    // The pipeline only records valid tags: anything else (a journal line read back) is dropped.
    tags: isTagList(r.tags) && r.tags.length > 0 ? r.tags : null,
    bytesIn: optionalCount(r.bytesIn),
    bytesOut: optionalCount(r.bytesOut),
    responseCache: CACHE_OUTCOMES.find((o) => o === r.responseCache) ?? null,
    cacheSavedUsd: r.cacheSavedUsd === null || r.cacheSavedUsd === undefined ? null : storableCost(r.cacheSavedUsd),
    providerKey: nullableText(r.providerKey, TEXT_CAPS.label),
    dryRun: r.dryRun === true ? true : null,
  };
  // Only on records that carry it (not a column: a record read back from the store has none).
  const spend = storableSpend(r.budgetSpend);
  if (spend) record.budgetSpend = spend;
  const changed: string[] = [];
  for (const key in record) {
    const k = key as keyof LedgerRecord;
    // An optional field left out is null in the row, not a change.
    if (record[k] !== r[k] && !(record[k] === null && r[k] === undefined)) changed.push(k);
  }
  return { record, changed };
}

/**
 * The form a row is written in when the database refused it even sanitized (a value no rule
 * above foresaw): every text column reduced to printable ASCII and short, content dropped, the
 * reason in error_message. Its request id, time, counts and outcome are kept, so the request is
 * still in the log and its spend still counted.
 */
export function setAsideRecord(record: LedgerRecord, reason: string): LedgerRecord {
  const label = (value: string) => ascii(value, TEXT_CAPS.label);
  const maybe = (value: string | null) => (value === null ? null : label(value));
  return {
    ...record,
    requestId: ascii(record.requestId, TEXT_CAPS.id),
    keyId: maybe(record.keyId),
    projectId: maybe(record.projectId),
    provider: label(record.provider),
    model: label(record.model),
    requestedModel: label(record.requestedModel),
    surface: label(record.surface) as LedgerRecord['surface'],
    usageSource: label(record.usageSource) as LedgerRecord['usageSource'],
    outcome: label(record.outcome) as LedgerRecord['outcome'],
    errorType: maybe(record.errorType),
    errorCode: maybe(record.errorCode),
    errorMessage: ascii(`set aside by the ledger: ${reason}`, 256),
    finishReason: maybe(record.finishReason),
    upstreamRequestId: maybe(record.upstreamRequestId ?? null),
    upstreamErrorType: maybe(record.upstreamErrorType ?? null),
    upstreamErrorCode: maybe(record.upstreamErrorCode ?? null),
    billing: record.billing === 'void' ? 'void' : null,
    providerKey: maybe(record.providerKey ?? null),
    attempts: null,
    prompt: null,
    completion: null,
  };
}

/**
 * NUL, and UTF-16 surrogates without their pair (a JS string may hold them; UTF-8 cannot, and
 * the drivers would encode them as U+FFFD anyway, so the record says what is stored).
 */
const UNSTORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/** A string any text column of either engine holds: no NUL, no lone surrogate, at most `cap` long. */
export function storableText(value: unknown, cap: number): string {
  if (typeof value !== 'string') return '';
  const capped = value.length > cap ? value.slice(0, cap) : value;
  // Almost every value is clean and is returned as it was: one scan, no copy.
  return UNSTORABLE.test(capped) ? capped.replace(UNSTORABLE_ALL, '\uFFFD') : capped;
}

/** Whether a text column of either engine keeps `id` as it is: an id that is not was never stored. */
export function storableId(id: string): boolean {
  return id.length > 0 && storableText(id, TEXT_CAPS.name) === id;
}

/** A token count column: normalizeTokenCount's rule, and 0 for a value that is no count. */
function tokenCount(value: unknown): number {
  return normalizeTokenCount(value) ?? 0;
}

/** Cost: a finite, non-negative number, else 0 (NaN and infinities fail both comparisons). */
const CACHE_OUTCOMES = ['hit', 'miss', 'bypass'] as const;

function storableCost(value: unknown): number {
  return typeof value === 'number' && value >= 0 && value < Number.POSITIVE_INFINITY ? value : 0;
}

/** Gateway overhead (a double precision column, so fractions stay): within int4's range, else null. */
function storableOverhead(value: unknown): number | null {
  return typeof value === 'number' && value >= 0 && value < 2 ** 31 ? value : null;
}

/** A usage detail: absent stays null, anything else is a token count by normalizeTokenCount's rule. */
function optionalCount(value: unknown): number | null {
  return value === null || value === undefined ? null : tokenCount(value);
}

function nullableText(value: unknown, cap: number): string | null {
  return value === null || value === undefined ? null : storableText(value, cap);
}

/** A routed request tries a handful of targets; more is not a record worth keeping whole. */
const MAX_ATTEMPTS = 16;

/**
 * The budget spend a record carries (a journal line read back may hold anything): kept as it is
 * when every entry is well formed, else none (the row is still written; its spend is not).
 */
function storableSpend(value: unknown): LedgerRecord['budgetSpend'] {
  if (!Array.isArray(value)) return null;
  const text = (v: unknown) => typeof v === 'string' && v.length > 0 && v.length <= TEXT_CAPS.name;
  const ok = value.every(
    (s: Record<string, unknown> | null) =>
      typeof s === 'object' &&
      s !== null &&
      text(s.windowId) &&
      text(s.subject) &&
      text(s.period) &&
      Number.isSafeInteger(s.start) &&
      typeof s.usd === 'number' &&
      s.usd >= 0 &&
      Number.isFinite(s.usd),
  );
  return ok ? (value as LedgerRecord['budgetSpend']) : null;
}

/** The attempts as the column keeps them (JSON text): each field of its type and capped; the same array when it was clean. */
function storableAttempts(value: unknown): LedgerRecord['attempts'] {
  if (!Array.isArray(value)) return null;
  let changed = value.length > MAX_ATTEMPTS;
  const clean = value.slice(0, MAX_ATTEMPTS).map((item: unknown) => {
    const a = (item ?? {}) as Record<string, unknown>;
    const out = {
      provider: storableText(a.provider, TEXT_CAPS.name),
      model: storableText(a.model, TEXT_CAPS.name),
      status: a.status === null ? null : int4(a.status),
      errorCode: nullableText(a.errorCode, TEXT_CAPS.name),
      fallbackReason: nullableText(a.fallbackReason, TEXT_CAPS.label),
      latencyMs: int4(a.latencyMs) ?? 0,
    };
    for (const key of Object.keys(out) as (keyof typeof out)[]) if (out[key] !== a[key]) changed = true;
    return out;
  });
  return changed ? clean : (value as LedgerRecord['attempts']);
}

/** An int4 column: floored and clamped to [0, INT4_MAX]; null (and anything not a number) is null. */
function int4(value: unknown): number | null {
  if (typeof value !== 'number' || Number.isNaN(value)) return null;
  return Math.min(Math.max(Math.floor(value), 0), INT4_MAX);
}

function epochMs(value: unknown): number {
  return typeof value === 'number' && value >= 0 && Number.isSafeInteger(value) ? value : Date.now();
}

function ascii(value: string, cap: number): string {
  return value.replace(/[^\x20-\x7e]/g, '?').slice(0, cap);
}
