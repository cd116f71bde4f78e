/**
 * The ledger rows bench/ledger-page.ts and the query-plan test seed: row i is a pure function of i, so the
 * bench can hold the few columns its filters read in typed arrays (20 bytes a row, not the records)
 * and work out every page's right answer without asking the store.
 */
import type { LedgerRecord } from '../../src/accounting/ledger-record.ts';
import { ledgerRecord } from './ledger-records.ts';

/** Provider-side models with their share of the traffic (a mix of chat-heavy and rare ones). */
export const MODELS = [
  { provider: 'openai', model: 'gpt-4o-mini', share: 30, alias: 'fast' },
  { provider: 'openai', model: 'gpt-4o', share: 12, alias: 'smart' },
  { provider: 'openai', model: 'o3-mini', share: 3, alias: null },
  { provider: 'openai', model: 'text-embedding-3-small', share: 10, alias: null },
  { provider: 'anthropic', model: 'claude-3-5-haiku', share: 14, alias: null },
  { provider: 'anthropic', model: 'claude-sonnet-4', share: 9, alias: 'coder' },
  { provider: 'bedrock', model: 'anthropic.claude-3-haiku', share: 5, alias: null },
  { provider: 'gemini', model: 'gemini-2.0-flash', share: 8, alias: null },
  { provider: 'gemini', model: 'gemini-2.5-pro', share: 2, alias: null },
  { provider: 'mistral', model: 'mistral-small', share: 4, alias: null },
  { provider: 'groq', model: 'llama-3.3-70b', share: 2.5, alias: null },
  { provider: 'groq', model: 'llama-3.1-8b', share: 0.5, alias: null },
] as const;

/** Gateway keys: traffic is skewed (a few busy services, a long tail); KEY_SHARE of requests use one. */
export const KEYS = 2000;
export const PROJECTS = 40;
const KEY_SHARE = 0.95;
/** Outcomes: most requests succeed; errors and cancelled streams are the rare rows people look for. */
const ERROR_SHARE = 0.02;
const CANCELLED_SHARE = 0.005;
const OUTCOMES = ['ok', 'error', 'cancelled'] as const;
const DAY_MS = 86_400_000;
export const SPAN_MS = 30 * DAY_MS;

/** A 32-bit integer hash (the murmur3 finalizer): independent-looking draws per row and salt. */
function draw(i: number, salt: number): number {
  let h = Math.imul(i ^ Math.imul(salt, 0x9e3779b1), 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h ^ salt, 0x27d4eb2f);
  h ^= h >>> 15;
  return (h >>> 0) / 2 ** 32;
}

const SHARE_TOTAL = MODELS.reduce((sum, m) => sum + m.share, 0);
function modelOf(u: number): number {
  let acc = 0;
  for (let m = 0; m < MODELS.length; m++) {
    acc += MODELS[m].share / SHARE_TOTAL;
    if (u < acc) return m;
  }
  return MODELS.length - 1;
}

export const keyName = (k: number) => `key_${String(k).padStart(4, '0')}`;
export const projectName = (p: number) => `proj_${String(p).padStart(2, '0')}`;
export const projectOfKey = (k: number) => k % PROJECTS;

/** The columns the filters and the orders read, row i at index i. */
export interface RowColumns {
  rows: number;
  start: number;
  createdAt: Float64Array;
  model: Uint8Array;
  /** 0: `provider/model`, 1: the model's alias (when it has one), 2: the bare model name. */
  naming: Uint8Array;
  /** -1: the master key (no key, no project). */
  key: Int16Array;
  outcome: Uint8Array;
}

/**
 * `rows` rows over the 30 days before `end`, in the order they are written (rowid order on SQLite):
 * a record is written when its request ends, so created_at (the request's start) runs a little
 * out of write order, by the request's latency.
 */
export function rowColumns(rows: number, end: number): RowColumns {
  const start = end - SPAN_MS;
  const columns: RowColumns = {
    rows,
    start,
    createdAt: new Float64Array(rows),
    model: new Uint8Array(rows),
    naming: new Uint8Array(rows),
    key: new Int16Array(rows),
    outcome: new Uint8Array(rows),
  };
  for (let i = 0; i < rows; i++) {
    const m = modelOf(draw(i, 1));
    columns.model[i] = m;
    const naming = draw(i, 2);
    columns.naming[i] = naming < 0.7 ? 0 : naming < 0.9 && MODELS[m].alias ? 1 : 2;
    // Skewed: key k's share falls with k (u^3 puts most traffic on the first keys).
    columns.key[i] = draw(i, 3) < KEY_SHARE ? Math.min(KEYS - 1, Math.floor(KEYS * draw(i, 4) ** 3)) : -1;
    const o = draw(i, 5);
    columns.outcome[i] = o < ERROR_SHARE ? 1 : o < ERROR_SHARE + CANCELLED_SHARE ? 2 : 0;
    const endedAt = start + Math.floor((i * SPAN_MS) / rows);
    columns.createdAt[i] = endedAt - latencyOf(i);
  }
  return columns;
}

/** 0.2 s to 30 s, most requests short. */
const latencyOf = (i: number) => 200 + Math.floor(29_800 * draw(i, 6) ** 4);

/** Time first (as sluice's ids are), then the row's number: unique, and sorts like newRequestId's. */
export function requestIdOf(c: RowColumns, i: number): string {
  return c.createdAt[i].toString(36).padStart(8, '0') + String(i).padStart(12, '0');
}

export function requestedModelOf(c: RowColumns, i: number): string {
  const m = MODELS[c.model[i]];
  return c.naming[i] === 0 ? `${m.provider}/${m.model}` : c.naming[i] === 1 && m.alias ? m.alias : m.model;
}

export function outcomeOf(c: RowColumns, i: number): LedgerRecord['outcome'] {
  return OUTCOMES[c.outcome[i]];
}

/** The full record of row i: usage, cost and timings plausible for its model and outcome. */
export function recordOf(c: RowColumns, i: number): LedgerRecord {
  const m = MODELS[c.model[i]];
  const outcome = outcomeOf(c, i);
  const key = c.key[i];
  const embedding = m.model.startsWith('text-embedding');
  const input = 20 + Math.floor(4000 * draw(i, 7) ** 2);
  const output = embedding || outcome === 'error' ? 0 : 5 + Math.floor(900 * draw(i, 8) ** 2);
  const latency = latencyOf(i);
  return ledgerRecord({
    requestId: requestIdOf(c, i),
    createdAt: c.createdAt[i],
    keyId: key < 0 ? null : keyName(key),
    projectId: key < 0 ? null : projectName(projectOfKey(key)),
    provider: m.provider,
    model: m.model,
    requestedModel: requestedModelOf(c, i),
    surface: embedding ? 'embeddings' : m.provider === 'anthropic' && draw(i, 9) < 0.5 ? 'messages' : 'chat',
    streamed: !embedding && draw(i, 10) < 0.8,
    inputTokens: input,
    cachedInputTokens: draw(i, 11) < 0.3 ? Math.floor(input / 2) : 0,
    outputTokens: output,
    costUsd: (input * 0.15 + output * 0.6) / 1e6,
    ttftMs: embedding || outcome === 'error' ? null : Math.min(latency, 150 + Math.floor(600 * draw(i, 12))),
    latencyMs: latency,
    upstreamStatus: outcome === 'error' ? (draw(i, 13) < 0.5 ? 429 : 500) : 200,
    outcome,
    errorType: outcome === 'error' ? 'upstream_error' : null,
    errorCode: outcome === 'error' ? 'upstream_unavailable' : null,
    errorMessage: outcome === 'error' ? 'The upstream answered 5xx.' : null,
    finishReason: outcome === 'ok' && !embedding ? 'stop' : null,
    upstreamRequestId: `up-${i}`,
    overheadMs: 0.3 + draw(i, 14),
  });
}
