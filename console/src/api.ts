/** The gateway's answers the console reads (snake_case, as the API sends them). */
export interface RequestRecord {
  request_id: string;
  created_at: string;
  key_id: string | null;
  project_id: string | null;
  provider: string;
  model: string;
  requested_model: string;
  surface: string;
  streamed: boolean;
  usage: {
    input_tokens: number;
    cached_input_tokens: number;
    cache_write_tokens: number;
    output_tokens: number;
    reasoning_tokens: number;
    estimated: boolean;
  } & Record<string, number | boolean>;
  cost_usd: number;
  price_known: boolean;
  ttft_ms: number | null;
  latency_ms: number;
  overhead_ms: number | null;
  upstream_status: number | null;
  outcome: 'ok' | 'error' | 'cancelled' | 'interrupted';
  error: { type: string; code: string; message: string; upstream?: { type: string | null; code: string | null } } | null;
  finish_reason: string | null;
  upstream_request_id: string | null;
  billing: string | null;
  /** The exact response cache's outcome, when the request was under it (not the provider's prompt cache). */
  response_cache?: 'hit' | 'miss' | 'bypass';
  /** A response-cache hit: what it would have cost upstream. */
  cache_saved_usd?: number | null;
  attempts?: {
    provider: string;
    model: string;
    /** The upstream's HTTP status; null when it gave none (never reached, or refused before any). */
    status: number | null;
    error_code: string | null;
    fallback_reason: string | null;
    latency_ms: number;
  }[];
  prompt: string | null;
  completion: string | null;
}

export interface RequestPage {
  data: RequestRecord[];
  has_more: boolean;
  next_cursor: string | null;
  /** Where the write order stood when the page was read: the live log follows from there. */
  follow_cursor: string;
}

/** An entry of the audit log (GET /admin/audit): the changed fields, never a secret. */
export interface AuditEntry {
  id: string;
  created_at: string;
  actor: { kind: string; id: string | null; name: string | null };
  action: string;
  target: { type: string; id: string | null };
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  request_id: string;
  client_address: string | null;
  error_code: string | null;
}

export interface AuditPage {
  data: AuditEntry[];
  has_more: boolean;
  next_cursor: string | null;
}

export interface PriceUsed {
  source: 'registry' | 'config' | 'free' | 'unknown';
  registry_model: string | null;
  price: Record<string, unknown> | null;
  cost_usd: number;
  recorded_cost_usd: number;
}

export interface Stats {
  period: 'minute' | 'hour';
  step_seconds: number;
  times: number[];
  by_model: Record<string, { requests: number[]; tokens: number[]; cost: number[] }>;
  by_provider: Record<string, { requests: number[]; error_rate: (number | null)[] }>;
  ttft_ms: Record<'p50' | 'p95' | 'p99', (number | null)[]>;
  latency_ms: Record<'p50' | 'p95' | 'p99', (number | null)[]>;
  bucket_bounds_ms: number[];
  open_streams: number;
}

/**
 * A refusal from the gateway, with its message (the error body's) for the page to show, its code,
 * and the request field it names (`param`: `tier`, `budgets.daily_usd`, ...) for a form to show the
 * message beside that field.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string | null;
  readonly param: string | null;
  constructor(status: number, message: string, code: string | null = null, param: string | null = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.param = param;
  }
}

interface ErrorBody {
  error?: { message?: string; code?: string | null; param?: string | null };
}

/**
 * Every call goes with the session cookie (same origin; the browser adds it) and no key: the
 * key was given once, at login, and only the gateway keeps it.
 */
export async function api<T>(path: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(path, { credentials: 'same-origin', ...init });
  const body = (await res.json().catch(() => undefined)) as ErrorBody | undefined;
  if (!res.ok) {
    const error = body?.error;
    throw new ApiError(res.status, error?.message ?? `HTTP ${res.status}`, error?.code ?? null, error?.param ?? null);
  }
  return body as T;
}

export function postJson<T>(path: string, body: unknown): Promise<T> {
  return api<T>(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

export function patchJson<T>(path: string, body: unknown): Promise<T> {
  return api<T>(path, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** A DELETE carries no body (the admin API reads none). */
export function deleteJson<T>(path: string): Promise<T> {
  return api<T>(path, { method: 'DELETE' });
}

export function formatUsd(n: number): string {
  return `$${n.toFixed(n !== 0 && Math.abs(n) < 0.01 ? 6 : 4)}`;
}

export function formatMs(n: number | null): string {
  return n === null ? '–' : `${n} ms`;
}

/** Both sides of a reconciliation line, and their drift (report minus ledger). */
export interface ReconcileAmounts {
  input: number;
  cached: number;
  output: number;
  cost: number;
}

/** A stored reconciliation (GET /admin/reconciliations; docs/operations/reconciliation.md). */
export interface Reconciliation {
  id: string;
  provider: string;
  report: string | null;
  from: string;
  to: string;
  created_at: string;
  trigger: 'manual' | 'schedule';
  status: 'ok' | 'over' | 'failed';
  error: string | null;
  totals: { ledger: ReconcileAmounts; report: ReconcileAmounts; drift: ReconcileAmounts; relative: ReconcileAmounts } | null;
  lines: {
    day: string;
    model: string;
    ledger: ReconcileAmounts & { requests: number; unpriced: number };
    report: ReconcileAmounts;
    keys: string[];
    drift: ReconcileAmounts;
    relative: ReconcileAmounts;
    status: string;
    over: boolean;
  }[];
  reasons: string[];
  notes: string[];
}
