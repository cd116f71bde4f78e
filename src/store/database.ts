/**
 * The tables, as Kysely sees them. One schema serves both engines: integers for booleans and
 * epoch-millisecond times, so node:sqlite and PostgreSQL store and return the same values.
 */
export interface LedgerTable {
  request_id: string;
  created_at: number;
  key_id: string | null;
  provider: string;
  model: string;
  requested_model: string;
  surface: string;
  streamed: number;
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  usage_source: string;
  cost_usd: number;
  price_known: number;
  ttft_ms: number | null;
  latency_ms: number;
  upstream_status: number | null;
  outcome: string;
  error_type: string | null;
  error_code: string | null;
  error_message: string | null;
  finish_reason: string | null;
  prompt: string | null;
  completion: string | null;
}

/** Responses created through sluice, for GET /v1/responses/{id} and previous_response_id. */
export interface ResponsesTable {
  id: string;
  created_at: number;
  model: string;
  /** JSON: the chat messages of the whole conversation, this response's output included. */
  conversation: string;
  /** JSON: the response object as the client received it. */
  response: string;
}

/**
 * Requests refused at the door (no key, a bad key), counted per minute, reason and surface
 * instead of one ledger row each: an anonymous flood adds at most one row per minute and reason.
 */
export interface RejectionsTable {
  /** Epoch ms of the minute's start. */
  window_start: number;
  surface: string;
  /** The error code the client got (e.g. invalid_api_key). */
  code: string;
  count: number;
}

export interface Database {
  ledger: LedgerTable;
  responses: ResponsesTable;
  rejections: RejectionsTable;
}
