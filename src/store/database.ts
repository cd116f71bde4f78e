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
  audio_input_tokens: number | null;
  audio_output_tokens: number | null;
  accepted_prediction_tokens: number | null;
  rejected_prediction_tokens: number | null;
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
  /** The caller's project (migration 0005); null for the master key and older rows. */
  project_id: string | null;
  /** The upstream's request id (migration 0006). */
  upstream_request_id: string | null;
  upstream_error_type: string | null;
  upstream_error_code: string | null;
  /** `void` when the tier did not bill an abandoned stream (migration 0006). */
  billing: string | null;
  /** JSON: the targets a routed request tried (migration 0008). */
  attempts: string | null;
  /** sluice's own time on the request, ms (migration 0011). */
  overhead_ms: number | null;
  /** JSON: the request's tags (migration 0018); null: none. */
  tags: string | null;
  /** An MCP tool call's arguments and result in JSON bytes (migration 0022); null on model requests. */
  bytes_in: number | null;
  bytes_out: number | null;
  /** The response cache's outcome, hit, miss or bypass (migration 0026); null: not under the cache. */
  response_cache: string | null;
  /** A response-cache hit's cost had it gone upstream, USD (migration 0026). */
  cache_saved_usd: number | null;
  /** The label of the provider key the answer came with (migration 0028); null without a key pool. */
  provider_key: string | null;
  /** 1 for a dry run (x-sluice-dry-run, migration 0029); null otherwise. */
  dry_run: number | null;
}

/**
 * The prompt and completion of a request, when ledger.store_content is on (migration 0021): apart
 * from the ledger so they have a retention of their own, and the ledger's rows stay small.
 */
export interface LedgerContentTable {
  request_id: string;
  /** The ledger row's created_at: the partition key on PostgreSQL, and what a read finds it by. */
  created_at: number;
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
  /** The project of the key that created it (null: the master key); only its project reads it. */
  project_id: string | null;
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

/** A team's unit: its keys, endpoints, tier and budgets (src/governance/keys). */
export interface ProjectsTable {
  id: string;
  name: string;
  tier: string | null;
  budget_day_usd: number | null;
  budget_month_usd: number | null;
  created_at: number;
  /** JSON array of model names for its keys that list none; null: any model. */
  allowed_models: string | null;
  /** JSON object of string values, the operator's own (owner, cost centre...); null: none. */
  metadata: string | null;
  /** Soft deletion (epoch ms): the row stays for the ledger's and the spend's sake. */
  deleted_at: number | null;
}

/**
 * Gateway-issued keys. Never the secret: its keyed hash (hex), and during a rotation's grace
 * period the previous secret's hash until `previous_valid_until`.
 */
export interface ApiKeysTable {
  id: string;
  project_id: string;
  name: string | null;
  secret_hash: string;
  previous_hash: string | null;
  previous_valid_until: number | null;
  tier: string | null;
  /** JSON array of model names (as clients name them); null: any model. */
  allowed_models: string | null;
  budget_day_usd: number | null;
  budget_month_usd: number | null;
  admin: number;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
  /** Set while the key is disabled (refused, but can be enabled again). */
  disabled_at: number | null;
  /** Soft deletion (epoch ms): refused like an unknown key, hidden from listings, its ledger rows kept. */
  deleted_at: number | null;
}

/** A project's endpoint, served at /{project}/{endpoint}/v1/...: a default model and stream settings. */
export interface EndpointsTable {
  project_id: string;
  name: string;
  model: string;
  stream_profile: string | null;
  usage: string | null;
  error_style: string | null;
  vendor_events: string | null;
  /** The endpoint's response cache setting as JSON (migration 0027); null: not opted in. */
  cache: string | null;
  created_at: number;
}

/**
 * Ids an upstream's own Responses API handed out through the relay (responses, their output
 * items, conversations), with the project they were handed to: the only project whose keys may
 * name them in a relayed request (migration 0016).
 */
export interface RelayedIdsTable {
  id: string;
  project_id: string;
  /** When it was first handed out (epoch ms). */
  created_at: number;
}

/**
 * The audit log (migration 0018): one row per admin mutation or console sign-in, sign-out and
 * failed sign-in. `before` and `after` are JSON objects of the changed fields, never a secret.
 */
export interface AuditLogTable {
  id: string;
  created_at: number;
  /** `master`, `key`, `anonymous` (a failed sign-in), ... (governance/audit/audit-actor.ts). */
  actor_kind: string;
  actor_id: string | null;
  actor_name: string | null;
  action: string;
  target_type: string;
  target_id: string | null;
  before: string | null;
  after: string | null;
  request_id: string;
  client_address: string | null;
  error_code: string | null;
}

/** A reconciliation of the ledger against a provider's report (src/reconcile, migration 0024). */
export interface ReconciliationsTable {
  id: string;
  provider: string;
  /** The range's first and last UTC day, `YYYY-MM-DD`. */
  from_day: string;
  to_day: string;
  created_at: number;
  /** `manual` (POST /admin/reconciliations, `sluice reconcile`) or `schedule`. */
  trigger: string;
  /** `ok`, `over` (past reconcile.threshold) or `failed` (the report could not be read). */
  status: string;
  error: string | null;
  /** JSON: the comparison (reconcile/compare.ts); null when it failed. */
  result: string | null;
}

/** Who runs a provider's reconciliation now, across instances (migration 0024). */
export interface ReconcileLocksTable {
  name: string;
  holder: string;
  expires_at: number;
}

/**
 * Files, batches and message batches created through sluice's relay of the Files and Batch APIs
 * (migration 0025): which project, key and provider each upstream id belongs to (another
 * project's id is a 404), and the batch's settlement: its usage and cost recorded once, by the
 * instance whose conditional update set `settled_at`.
 */
export interface BatchObjectsTable {
  id: string;
  /** `file`, `batch` (OpenAI's Batch API) or `message_batch` (Anthropic's). */
  kind: string;
  provider: string;
  project_id: string | null;
  key_id: string | null;
  /** The request that created it (a batch's row in the ledger). */
  request_id: string;
  created_at: number;
  /** The budget rules in force at creation (JSON), which the settlement's spend is charged to; null: none. */
  budgets: string | null;
  /** When its settlement row was claimed (epoch ms); null while it runs. */
  settled_at: number | null;
  deleted_at: number | null;
}

export interface Database {
  ledger: LedgerTable;
  batch_objects: BatchObjectsTable;
  ledger_content: LedgerContentTable;
  responses: ResponsesTable;
  relayed_ids: RelayedIdsTable;
  rejections: RejectionsTable;
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
  endpoints: EndpointsTable;
  audit_log: AuditLogTable;
  reconciliations: ReconciliationsTable;
  reconcile_locks: ReconcileLocksTable;
}
