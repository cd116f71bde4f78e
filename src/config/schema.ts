import { isIP } from 'node:net';
import { z } from 'zod';
import { ssoSchema } from './sso-schema.ts';
import { mcpSchema } from './mcp-schema.ts';
import { STREAM_PROFILE_NAMES } from './stream-profile-names.ts';

// Every object is strict: an unknown key is an error with a did-you-mean (describe-issue.ts),
// never silently ignored.

const seconds = z.number().nonnegative();
const days = z.number().int().positive();

/** A copy of every ledger row as an OpenTelemetry log record (docs/operations/analytics-export.md). */
const ledgerExport = z
  .strictObject({
    endpoint: z
      .url({ protocol: /^https?$/ })
      .or(z.literal(''))
      .optional()
      .transform((url) => url || undefined)
      .describe(
        'OTLP/HTTP logs URL, used as given (`http://collector:4318/v1/logs`); OTEL_EXPORTER_OTLP_LOGS_ENDPOINT sets it too. Unset: off.',
      ),
    headers: z
      .record(z.string(), z.string())
      .default({})
      .describe('Headers sent with every export (an API key); OTEL_EXPORTER_OTLP_LOGS_HEADERS adds to them (these win a clash).'),
    batch_size: z.number().int().positive().default(512).describe('At most this many records in one export request.'),
    max_queue: z
      .number()
      .int()
      .positive()
      .default(10_000)
      .describe('Records waiting for the collector; past this they are dropped and counted (sluice_log_export_dropped_total).'),
    flush_interval_ms: z.number().int().positive().default(1_000).describe('A partial batch is sent after this long.'),
    timeout_ms: z
      .number()
      .int()
      .positive()
      .default(10_000)
      .describe('One export, retries on 429, 502, 503 and 504 included, gives up after this long.'),
    content: z
      .boolean()
      .default(false)
      .describe('Export the stored prompt and completion too (needs ledger.store_content; off by default).'),
  })
  .prefault({})
  .describe('Export every ledger row, once stored, to an OpenTelemetry collector as a log record (best effort).');

/** `https://app.example.com` as a browser sends it in Origin: scheme, host, port; no path, no slash. */
const isOrigin = (value: string): boolean => {
  if (value === '*') return true;
  try {
    return new URL(value).origin === value;
  } catch {
    return false;
  }
};

// The descriptions (.describe) are the configuration reference: scripts/docs/config-reference.ts
// renders docs/reference/configuration.md from them. They change no validation.

/** `10.0.0.5`, `::1`, or a CIDR block (`10.0.0.0/8`, `fd00::/8`) with a prefix within its family's length. */
const isAddressOrBlock = (value: string): boolean => {
  const slash = value.indexOf('/');
  const family = isIP(slash === -1 ? value : value.slice(0, slash));
  if (family === 0 || slash === -1) return family !== 0;
  const prefix = value.slice(slash + 1);
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
};

/** One key of a provider's pool (docs/providers.md "Key pools"). */
const poolKeySchema = z.strictObject({
  key: z.string().describe('The secret (`${OPENAI_KEY_2}`); one that resolves empty is left out of the pool.'),
  label: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'must be a name of letters, digits, _ . - (at most 64)')
    .describe('Its name in the ledger, the spend report, /metrics, /readyz and the log (never the key itself).'),
  weight: z.number().positive().default(1).describe('Its share of the requests among the keys usable at the time.'),
  rpm: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Requests a minute sluice sends with it (besides what the upstream says).'),
  tpm: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Tokens a minute (input plus output, as the answers report them) sluice sends with it.'),
});

const providerSchema = z.strictObject({
  type: z
    .enum(['openai-compatible', 'azure', 'vertex'])
    .optional()
    .describe(
      '`openai-compatible` for a server declared in the config; `azure` or `vertex` for another Azure OpenAI resource or Vertex AI project under a name of its own. The built-in presets and native providers (`azure`, `vertex` included) infer their own.',
    ),
  api_key: z.string().optional().describe("The provider's key; empty leaves the provider disabled. Wins over the environment."),
  api_keys: z
    .array(poolKeySchema)
    .min(1)
    .optional()
    .describe(
      'A pool of keys in place of api_key: chosen by weight within their limits, a 429 cools one down, a 401/403 takes it out (docs/providers.md).',
    ),
  base_url: z
    .url()
    .optional()
    .describe("The upstream's base URL (`…/v1` for OpenAI-compatible servers). Wins over the environment."),
  headers: z.record(z.string(), z.string()).optional().describe("Extra headers sent upstream (e.g. OpenRouter's HTTP-Referer)."),
  think_tags: z
    .enum(['keep', 'reasoning'])
    .optional()
    .describe('`keep` leaves `<think>` tags in the content (default); `reasoning` moves them to reasoning_content.'),
  stream_options: z
    .boolean()
    .optional()
    .describe('`false` for servers that reject `stream_options`; they still usually send usage on their own.'),
  drop_params: z
    .boolean()
    .optional()
    .describe('Drop request parameters the provider cannot honour instead of answering 400 naming them.'),
  region: z
    .string()
    .optional()
    .describe(
      'Bedrock: the AWS region (else AWS_REGION, else us-east-1). Vertex: the location (else GOOGLE_CLOUD_LOCATION, else `global`).',
    ),
  api_version: z
    .string()
    .regex(/^[A-Za-z0-9.-]+$/)
    .optional()
    .describe(
      'Azure OpenAI: the `api-version` of the deployments API (else AZURE_OPENAI_API_VERSION, else 2024-10-21); `v1` calls the v1 API (`{endpoint}/openai/v1/…`) instead.',
    ),
  deployments: z
    .record(z.string(), z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/))
    .optional()
    .describe('Azure OpenAI: model name -> deployment name (a model not listed is called under its own name).'),
  tenant_id: z
    .string()
    .optional()
    .describe('Azure OpenAI: the Microsoft Entra tenant of `client_id` (else AZURE_TENANT_ID): Entra ID instead of an api_key.'),
  client_id: z.string().optional().describe('Azure OpenAI: the Entra application (client) id (else AZURE_CLIENT_ID).'),
  client_secret: z.string().optional().describe('Azure OpenAI: the Entra client secret (else AZURE_CLIENT_SECRET).'),
  token_url: z
    .url()
    .optional()
    .describe('Azure OpenAI: the Entra token endpoint (else https://login.microsoftonline.com/{tenant_id}/oauth2/v2.0/token).'),
  project: z.string().optional().describe('Vertex: the Google Cloud project id (else GOOGLE_CLOUD_PROJECT).'),
  credentials_file: z
    .string()
    .optional()
    .describe(
      'Vertex: a service-account key file (else GOOGLE_APPLICATION_CREDENTIALS); without one, VERTEX_ACCESS_TOKEN is the access token.',
    ),
  responses_api: z
    .boolean()
    .optional()
    .describe(
      'OpenAI-compatible upstreams that implement /v1/responses themselves, and Azure OpenAI (api-version 2025-03-01-preview on, or v1): relay /v1/responses to them (events as sent).',
    ),
  models: z.array(z.string()).optional().describe('Model ids listed by GET /v1/models (and served under bare names).'),
});

/** A spending limit over a calendar period (UTC): the key's own spend, or its whole project's. */
const tierBudgetSchema = z.strictObject({
  scope: z.enum(['key', 'project']).default('key').describe("Whose spend: the key's own, or its whole project's."),
  period: z.enum(['day', 'month']).describe('The calendar period, in UTC.'),
  limit_usd: z.number().positive().describe('The most that may be spent in one period, in USD.'),
});

/**
 * The exact response cache of a tier, route or endpoint (docs/operations/response-cache.md):
 * opting in is setting it. An endpoint's (an admin-API object) is checked with this same schema.
 */
export const cacheSettingSchema = z.strictObject({
  ttl_s: z.number().positive().describe('How long a cached answer is served, in seconds.'),
  max_bytes: z
    .number()
    .int()
    .positive()
    .default(1_048_576)
    .describe('The largest answer cached (its stored JSON, in bytes); a larger one is answered but not kept.'),
});

const cacheSchema = cacheSettingSchema
  .optional()
  .describe(
    'Answers to identical requests are served from the response cache for `ttl_s` (docs/operations/response-cache.md). Unset: not cached.',
  );

/** Per-minute and in-flight limits; `undefined`: unlimited. */
const rateLimitsShape = {
  requests_per_minute: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Requests a minute (a token bucket: the whole limit at once, then at the rate).'),
  tokens_per_minute: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Prompt (estimated up front) plus output tokens a minute, reconciled with the real usage at the end.'),
  concurrent_requests: z.number().int().positive().optional().describe('Requests in flight at once.'),
};

/** What a tier grants (docs/governance/tiers-limits-budgets.md). */
const tierSchema = z.strictObject({
  deadline_s: seconds
    .optional()
    .describe('The request deadline, replacing stream.deadline_s / responses.deadline_s; the error names the tier.'),
  idle_timeout_s: seconds.optional().describe('Replaces stream.idle_timeout_s.'),
  /** Limits per key. */
  ...rateLimitsShape,
  project: z.strictObject(rateLimitsShape).optional().describe('The same limits over all the keys of a project together.'),
  budgets: z.array(tierBudgetSchema).default([]).describe('USD budgets over calendar periods (UTC); several at once.'),
  abandoned_streams: z
    .enum(['bill_generated', 'void'])
    .default('bill_generated')
    .describe('A stream the client abandoned: bill what was generated, or charge nothing (cost 0, `billing: void`).'),
  redis_unavailable: z
    .enum(['fail_open', 'fail_closed'])
    .default('fail_open')
    .describe('With Redis unreachable: admit without limits or budgets, or refuse with 503 limits_unavailable.'),
  on_disconnect: z.enum(['cancel', 'drain']).optional().describe("Replaces stream.on_disconnect for this tier's streams."),
  cache: cacheSchema,
});

/** Request parameters a route target sets in place of the client's (docs/routing.md). */
const targetParamsSchema = z.strictObject({
  temperature: z.number().min(0).max(2).optional().describe("Sent in place of the client's `temperature`."),
  top_p: z.number().min(0).max(1).optional().describe("Sent in place of the client's `top_p`."),
  max_tokens: z.number().int().positive().optional().describe("Sent in place of the client's `max_tokens`."),
  max_completion_tokens: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("Sent in place of the client's `max_completion_tokens`."),
  reasoning_effort: z
    .enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh'])
    .optional()
    .describe("Sent in place of the client's `reasoning_effort`."),
  seed: z.number().int().optional().describe("Sent in place of the client's `seed`."),
});

/** One provider's report to reconcile the ledger against (src/reconcile; docs/operations/reconciliation.md). */
const reconcileProviderSchema = z.strictObject({
  report: z
    .enum(['openai', 'anthropic', 'openrouter'])
    .describe(
      "Whose report: OpenAI's organization Usage and Costs APIs, Anthropic's Admin API usage and cost reports, OpenRouter's per-generation record.",
    ),
  admin_key: z
    .string()
    .describe(
      'The key the report API takes (an OpenAI or Anthropic admin key, an OpenRouter key), e.g. ${OPENAI_ADMIN_KEY:-}; never logged. Empty: this report is off.',
    ),
  base_url: z
    .url()
    .optional()
    .describe(
      "The report API's origin (default: the provider's own, https://api.openai.com, https://api.anthropic.com, https://openrouter.ai).",
    ),
  api_key_ids: z
    .array(z.string().min(1))
    .optional()
    .describe(
      "OpenAI, Anthropic: only these provider API keys' usage (the ones sluice calls with); unset: the whole organization's.",
    ),
  project_ids: z
    .array(z.string().min(1))
    .optional()
    .describe("OpenAI: only these projects' usage and costs (the Costs API has no per-key filter, so this scopes the cost)."),
  max_generations: z
    .number()
    .int()
    .positive()
    .default(5_000)
    .describe('OpenRouter: the most generations a run looks up, one request each (the oldest of the range first).'),
});

const routeSchema = z.strictObject({
  strategy: z
    .enum(['ordered', 'weighted'])
    .default('ordered')
    .describe('`ordered`: a fallback chain in the order written. `weighted`: spread over the healthy targets by weight.'),
  targets: z
    .array(
      z.strictObject({
        model: z
          .string()
          .regex(/^[^/]+\/.+$/, 'must be provider/model')
          .describe('The target, as `provider/model`.'),
        weight: z.number().positive().default(1).describe('Its share of a weighted route.'),
        ttft_timeout_s: z
          .number()
          .positive()
          .optional()
          .describe('Streamed: no first output within this long, the attempt is abandoned for the next target.'),
        timeout_s: z
          .number()
          .positive()
          .optional()
          .describe('Not streamed: no whole answer within this long, the attempt is abandoned for the next target.'),
        params: targetParamsSchema.optional().describe("Request parameters this target sets in place of the client's."),
      }),
    )
    .min(1)
    .describe('One or more targets, tried (ordered) or picked (weighted) in this order.'),
  sticky: z
    .boolean()
    .default(false)
    .describe('Requests with the same prompt_cache_key (or user, or x-sluice-session) go to the same healthy target.'),
  cache: cacheSchema,
});

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

const configObject = z.strictObject({
  server: z
    .strictObject({
      host: z
        .string()
        .default('127.0.0.1')
        .describe('The address to bind (HOST, --host). A non-loopback address needs a master key.'),
      port: z.number().int().min(0).max(65535).default(8080).describe('The port (PORT, --port); 0 picks a free one.'),
      body_limit_bytes: z
        .number()
        .int()
        .positive()
        .default(20 * 1024 * 1024)
        .describe('The largest request body accepted; larger ones get 413 request_too_large.'),
      upload_limit_bytes: z
        .number()
        .int()
        .positive()
        .default(25 * 1024 * 1024)
        .describe(
          "The largest multipart upload accepted (/v1/audio/transcriptions, /v1/audio/translations, /v1/images/edits: OpenAI's own limit is 25 MB); larger ones get 413 request_too_large.",
        ),
      drain_timeout_s: seconds
        .default(30)
        .describe('On SIGTERM or SIGINT: how long open streams may go on before they are ended.'),
      allowed_hosts: z
        .array(
          z
            .string()
            .regex(
              /^(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$|^\[[0-9a-f:.]+\]$/i,
              'must be a host name, *.domain, an IP or [IPv6], without a port',
            ),
        )
        .default([])
        .describe('Host names answered (`*.example.com`: any subdomain); empty: any with a key, loopback only without.'),
      cors_origins: z
        .union([z.literal('*'), z.array(z.string().refine(isOrigin, 'must be an origin (scheme://host[:port], no path) or "*"'))])
        .default([])
        .describe('Browser origins allowed by CORS (`https://app.example.com`), or "*"; empty: CORS off.'),
      max_connections: z
        .number()
        .int()
        .positive()
        .default(10_000)
        .describe('Open connections; at the cap an idle one is closed for a new one, and with none idle the new one is closed.'),
      max_connections_per_client: z
        .number()
        .int()
        .positive()
        .default(1_000)
        .describe(
          'Open connections of one client (an IPv4 address, an IPv6 /64); past it its new ones are closed at once. Behind a trusted proxy: requests in flight per forwarded client (429 past it).',
        ),
      trusted_proxies: z
        .array(z.string().refine(isAddressOrBlock, 'must be an IP address or a CIDR block (10.0.0.0/8)'))
        .default([])
        .describe(
          'Reverse proxies (addresses, CIDR blocks) whose X-Forwarded-For names the client and whose X-Forwarded-Proto says HTTPS; empty: those headers are never read.',
        ),
      secure_cookies: z
        .boolean()
        .default(false)
        .describe("The console's session cookie is always `Secure` (HTTPS in front of sluice whatever it forwards)."),
      headers_timeout_s: seconds
        .default(10)
        .describe('A client must send its request headers within this (slowloris); else 408 and the connection closes.'),
      request_timeout_s: seconds
        .default(60)
        .describe('The whole request (headers and body) must arrive within this; 0: off. Responses may stream longer.'),
      backlog: z
        .number()
        .int()
        .positive()
        .default(2048)
        .describe('The listen queue length (the kernel caps it at net.core.somaxconn).'),
    })
    .prefault({})
    .describe('The HTTP server and the checks at its edge.'),
  auth: z
    .strictObject({
      master_key: z
        .string()
        .optional()
        .transform((key) => key || undefined)
        .describe("The operator's key (SLUICE_MASTER_KEY). Empty (`${SLUICE_MASTER_KEY:-}` unset) means no key: loopback only."),
      key_pepper: z
        .string()
        .optional()
        .transform((pepper) => pepper || undefined)
        .describe(
          'The server-side secret of the keyed hash that gateway-issued keys are stored as (SLUICE_KEY_PEPPER). Set it before creating keys: changing it invalidates them.',
        ),
      key_cache_ttl_s: seconds
        .max(300)
        .default(10)
        .describe(
          'How long an instance trusts a verified key before reading it again: what a change made elsewhere takes when its announcement is lost (announced, it takes under a second).',
        ),
      failures_per_minute: z
        .number()
        .int()
        .nonnegative()
        .default(10)
        .describe(
          'Wrong keys a client address, and a key id, may present a minute (a bucket of as many, refilled at that rate); past it: 429 with Retry-After. 0: no throttle.',
        ),
      sso: ssoSchema.optional(),
    })
    .prefault({})
    .describe('The master key and the storage of gateway-issued keys.'),
  stream: z
    .strictObject({
      heartbeat_s: seconds
        .default(15)
        .describe('A `: heartbeat` comment (a `ping` on /v1/messages) after this long without output; 0: off.'),
      idle_timeout_s: seconds
        .default(120)
        .describe('No upstream data this long once it answered: the stream ends with stream_idle_timeout.'),
      deadline_s: seconds.default(600).describe('The whole request deadline: timeout_error.'),
      profile: z
        .enum(STREAM_PROFILE_NAMES)
        .default('openai')
        .describe(
          "`openai`: OpenAI's own stream behaviour. The others: each reference document's choices (docs/streams/profiles.md); `accounting` is the accounting events. Per request: X-Sluice-Profile.",
        ),
      error_style: z
        .enum(['data', 'event'])
        .optional()
        .describe(
          'An error frame as `data: {"error":…}`, or as an `event: error` frame. Unset: the profile\'s (`data` for `openai`).',
        ),
      usage: z
        .enum(['opt_in', 'always'])
        .optional()
        .describe(
          "The usage chunk only when the client sends stream_options.include_usage, or always. Unset: the profile's (`opt_in` for `openai`).",
        ),
      usage_extensions: z
        .boolean()
        .default(false)
        .describe("Adds `cost_usd` and `estimated` to the openai profile's usage object (strict clients may reject them)."),
      vendor_events: z
        .enum(['drop', 'passthrough'])
        .optional()
        .describe(
          "An upstream's `x_*` vendor events among the chunks (research steps, artifacts): dropped, as strict clients may choke on them, or passed through unchanged and in order. Unset: the profile's (`drop` for `openai`).",
        ),
      // `drain` reads the upstream to its end so that the usage is exact (docs/streams/contract.md "Disconnect policy").
      on_disconnect: z
        .enum(['cancel', 'drain'])
        .default('cancel')
        .describe(
          'A client that leaves a stream: `cancel` aborts the upstream at once; `drain` reads it to its end (within the deadline), then records it.',
        ),
      resume: z
        .strictObject({
          enabled: z.boolean().default(false).describe("Keep recent streams' frames for GET /v1/streams/{request_id}."),
          buffer_streams: z
            .number()
            .int()
            .positive()
            .default(1_000)
            .describe('At most this many streams are kept (the oldest goes first).'),
          buffer_bytes: z
            .number()
            .int()
            .positive()
            .default(67_108_864)
            .describe(
              'At most this many bytes of frames (64 MiB), over every kept stream (one stream larger than this is not kept).',
            ),
          ttl_s: seconds.default(300).describe('A stream is kept this long after its last frame.'),
          grace_s: seconds
            .default(30)
            .describe('A stream whose client went away goes on this long (then is cancelled), so that the client can resume it.'),
          event_ids: z
            .boolean()
            .default(false)
            .describe(
              "`id:` lines on the frames of the streams kept (each frame's number, for `Last-Event-ID`). Off by default: the reference documents' frames are `data: {json}` alone, and a client resumes after the number of events it got.",
            ),
        })
        .prefault({})
        .describe("Resumable streams: recent streams' frames are kept for GET /v1/streams/{request_id}."),
    })
    .prefault({})
    .describe('Streams of every surface: timeouts, frame shapes, disconnects and resuming.'),
  responses: z
    .strictObject({
      deadline_s: seconds.default(120).describe("The Responses surface's request deadline (its reference says 2 minutes)."),
    })
    .prefault({})
    .describe('The Responses API (/v1/responses).'),
  batches: z
    .strictObject({
      provider: z
        .string()
        .optional()
        .describe(
          'The provider /v1/files and /v1/batches go to (an OpenAI-compatible one); a request may name another in `X-Sluice-Provider`. Unset: the first OpenAI-compatible provider enabled.',
        ),
      poll_interval_s: seconds
        .default(60)
        .describe(
          "How often each instance asks the upstreams about the batches not yet settled, to record their usage; 0: only when a batch's results are fetched.",
        ),
      price_factor: z
        .number()
        .positive()
        .max(1)
        .default(0.5)
        .describe("A batch's usage is priced at this share of the model's price (OpenAI's and Anthropic's batch discount: 50%)."),
      max_upload_bytes: z
        .number()
        .int()
        .positive()
        .default(200 * 1024 * 1024)
        .describe('The largest file upload relayed (read into memory); larger ones get 413 request_too_large.'),
      max_download_bytes: z
        .number()
        .int()
        .positive()
        .default(200 * 1024 * 1024)
        .describe(
          'The largest file content or batch results read from an upstream (read into memory, the usage counted from it).',
        ),
    })
    .prefault({})
    .describe('The Files and Batch APIs relayed (docs/api/batches.md): OpenAI-compatible providers and Anthropic.'),
  response_cache: z
    .strictObject({
      backend: z
        .enum(['memory', 'redis'])
        .default('memory')
        .describe(
          "`memory`: this instance's own (an LRU bounded in bytes). `redis`: shared by every instance, at limits.redis_url.",
        ),
      memory_max_bytes: z
        .number()
        .int()
        .positive()
        .default(67_108_864)
        .describe('The memory backend holds at most this many bytes of answers (64 MiB); the least recently used go first.'),
      cache_length: z.boolean().default(false).describe('Also cache answers cut by their output limit (finish_reason `length`).'),
    })
    .prefault({})
    .describe(
      'Where the exact response cache keeps its answers; a tier, route or endpoint opts in with its own `cache` (docs/operations/response-cache.md).',
    ),
  store: z
    .strictObject({
      database_url: z
        .string()
        .optional()
        .transform((url) => url || undefined)
        .describe('PostgreSQL (for many instances); else (or empty) the embedded SQLite file below. DATABASE_URL sets it too.'),
      path: z.string().default('.sluice/sluice.db').describe('The embedded SQLite file, relative to the working directory.'),
      connect_timeout_ms: z
        .number()
        .int()
        .positive()
        .default(5_000)
        .describe('PostgreSQL: give up on a connection attempt after this long.'),
      query_timeout_ms: z
        .number()
        .int()
        .positive()
        .default(10_000)
        .describe('PostgreSQL: give up on a query after this long (ends a query on a half-open connection).'),
      pool_size: z
        .number()
        .int()
        .positive()
        .default(4)
        .describe(
          'PostgreSQL: connections each process keeps at most for queries (plus one while migrating, one listening for key changes).',
        ),
      listen: z
        .boolean()
        .default(true)
        .describe('PostgreSQL: hear key changes from other instances at once (LISTEN); off: within auth.key_cache_ttl_s.'),
      listen_url: z
        .string()
        .optional()
        .transform((url) => url || undefined)
        .describe(
          'PostgreSQL: where LISTEN connects, when database_url is a transaction-mode pooler (LISTEN needs a session: the server itself or a session-mode pool); default: database_url.',
        ),
    })
    .prefault({})
    .describe("Where the ledger, keys, stored responses and budgets' spend are kept."),
  ledger: z
    .strictObject({
      enabled: z
        .boolean()
        .default(true)
        .describe('Record every request. Off: no store, so no gateway-issued keys and no request log.'),
      store_content: z.boolean().default(false).describe('Keep prompts and completions in the request log, capped per record.'),
      content_max_chars: z
        .number()
        .int()
        .positive()
        .default(16_384)
        .describe('The cap on stored prompt and completion text, in characters.'),
      retention: z
        .strictObject({
          rows_days: days.optional().describe('Keep ledger rows this many days (PostgreSQL: to the month); absent: for good.'),
          content_days: days
            .optional()
            .describe(
              'Keep stored prompts and completions this many days (never longer than their rows); absent: as their rows.',
            ),
          rollups_days: z
            .strictObject({
              minute: days.default(2).describe('Per-minute rollups (the 24-hour charts).'),
              hour: days.optional().describe('Per-hour rollups; absent: for good.'),
              day: days.optional().describe('Per-day rollups; absent: for good.'),
            })
            .prefault({})
            .describe('Days each rollup resolution is kept.'),
        })
        .prefault({})
        .describe('How long the ledger keeps what (docs/operations/retention.md); applied by every instance every 10 minutes.'),
      flush_interval_ms: z.number().int().positive().default(200).describe('Records are written in a batch at least this often.'),
      batch_size: z.number().int().positive().default(500).describe('At most this many records in one batch.'),
      max_buffered: z
        .number()
        .int()
        .positive()
        .default(100_000)
        .describe('Records waiting in memory while the store is slow or down; past this they are dropped and counted.'),
      shutdown_flush_ms: z
        .number()
        .int()
        .positive()
        .default(10_000)
        .describe('On shutdown, write what is buffered for at most this long, then log what was lost.'),
      durable: z
        .boolean()
        .default(false)
        .describe('Journal every record to local disk before acknowledging it (docs/reliability "Ledger durability").'),
      journal: z
        .string()
        .min(1)
        .optional()
        .describe("The journal's directory (turns the durable mode on); default: ledger-journal beside store.path."),
      journal_sync_ms: z
        .number()
        .int()
        .nonnegative()
        .default(100)
        .describe('fdatasync the journal at most every this many ms (0: after every record).'),
      journal_progress_ms: z
        .number()
        .int()
        .positive()
        .default(1_000)
        .describe(
          'Write the progress of running requests to the journal at most every this many ms (what a crash recovery records).',
        ),
      export: ledgerExport,
    })
    .prefault({})
    .describe('The request log and its writer.'),
  pricing: z
    .record(
      z.string().regex(/^[^/]+\/.+$/, 'must be provider/model'),
      z.strictObject({
        input_mtok: z.number().nonnegative().default(0).describe('USD per million input tokens.'),
        output_mtok: z.number().nonnegative().default(0).describe('USD per million output tokens.'),
        cache_read_mtok: z.number().nonnegative().optional().describe('USD per million cached input tokens read.'),
        cache_write_mtok: z.number().nonnegative().optional().describe('USD per million input tokens written to the cache.'),
        per_image: z
          .number()
          .nonnegative()
          .optional()
          .describe('USD per image made, for image models priced per image (dall-e-3, dall-e-2).'),
        per_audio_minute: z
          .number()
          .nonnegative()
          .optional()
          .describe('USD per minute of audio transcribed or translated, for models priced by duration (whisper-1).'),
        per_million_characters: z
          .number()
          .nonnegative()
          .optional()
          .describe('USD per million characters of text spoken, for speech models priced by characters (tts-1, tts-1-hd).'),
      }),
    )
    .default({})
    .describe(
      'Prices for `provider/model` per million tokens, and per image, audio minute or character for media models, overriding or adding to the registry.',
    ),
  upstream: z
    .strictObject({
      connect_timeout_s: seconds
        .default(10)
        .describe('Give up connecting to an upstream after this long (a failure of the target).'),
      headers_timeout_s: seconds
        .default(300)
        .describe("Upper bound for the upstream's response headers (reasoning models can think a while)."),
    })
    .prefault({})
    .describe('Connections to the providers.'),
  providers: z
    .record(z.string().regex(/^[a-z0-9][a-z0-9_.-]*$/), providerSchema)
    .default({})
    .describe('Providers by name: a preset or native provider to configure, or any OpenAI-compatible server to declare.'),
  model_list: z
    .array(
      z.strictObject({
        model_name: z.string().min(1).describe('The alias clients send.'),
        model: z
          .string()
          .regex(/^[^/]+\/.+$/, 'must be provider/model')
          .describe('What it stands for, as `provider/model`.'),
      }),
    )
    .default([])
    .describe('Aliases: a model name clients send, for one `provider/model`.'),
  routes: z
    .record(z.string().min(1), routeSchema)
    .default({})
    .describe('Public model names served by one or more targets, with fallback and balancing.'),
  routing: z
    .strictObject({
      breaker_failures: z.number().int().positive().default(3).describe("Consecutive failures that open a target's breaker."),
      breaker_open_s: seconds
        .default(30)
        .describe('How long an open breaker skips its target before one probe request is let through.'),
    })
    .prefault({})
    .describe("Health of route targets: the circuit breaker's thresholds."),
  tiers: z
    .record(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'must be a name of letters, digits, _ . -'), tierSchema)
    .default({})
    .describe('Tiers by name; a key or project names its tier, else `default_tier` applies.'),
  default_tier: z.string().min(1).optional().describe('The tier of keys and projects that name none (a name under `tiers`).'),
  limits: z
    .strictObject({
      redis_url: z
        .string()
        .optional()
        .transform((url) => url || undefined)
        .describe('Limits and reservations shared by every instance; empty: in memory (one process). REDIS_URL sets it too.'),
      redis_timeout_ms: z
        .number()
        .int()
        .positive()
        .default(250)
        .describe("A Redis answer slower than this counts as Redis unreachable (the tier's redis_unavailable applies)."),
      redis_prefix: z
        .string()
        .min(1)
        .default('sluice:')
        .describe('Prefix of every Redis key sluice writes (several gateways, or tests, sharing one Redis).'),
      reserve_output_tokens: z
        .number()
        .int()
        .positive()
        .default(4096)
        .describe(
          'The output a budget reserves for a request without max_tokens (and caps a non-streamed answer at), in tokens.',
        ),
    })
    .prefault({})
    .describe('Where the per-minute limits, concurrency slots and budget reservations live.'),
  audit: z
    .strictObject({
      retention_days: z
        .number()
        .int()
        .nonnegative()
        .default(365)
        .describe('Audit entries older than this are deleted, a bounded batch at a time; 0 keeps them forever.'),
    })
    .prefault({})
    .describe('The audit log of admin changes and console sign-ins (docs/operations/audit-log.md), kept in the store.'),
  metrics: z
    .strictObject({
      enabled: z.boolean().default(true).describe('Serve GET /metrics; false: no route (404).'),
      public: z
        .boolean()
        .default(false)
        .describe('Open to anyone who reaches the port (a scraper without a key); else the master key or an admin key.'),
      max_label_values: z
        .number()
        .int()
        .positive()
        .default(100)
        .describe('Distinct unpriced models (and projects) with their own label; later ones are counted as `other`.'),
    })
    .prefault({})
    .describe("GET /metrics in Prometheus' text format."),
  reconcile: z
    .strictObject({
      providers: z
        .record(z.string().min(1), reconcileProviderSchema)
        .default({})
        .describe("By the ledger's provider name (openai, anthropic, openrouter, a name under providers): its report API."),
      threshold: z
        .strictObject({
          relative: z
            .number()
            .nonnegative()
            .default(0.02)
            .describe(
              'A drift of tokens or cost past this fraction of the larger side fails the check (exit 1, the gauge at 1).',
            ),
          absolute_usd: z
            .number()
            .nonnegative()
            .default(0.01)
            .describe('A cost drift of at most this many USD never fails it, whatever its fraction.'),
        })
        .prefault({}),
      schedule: z
        .strictObject({
          interval_h: z
            .number()
            .positive()
            .optional()
            .describe('Reconcile every provider above every this many hours (one instance at a time); unset: only on demand.'),
          days: z
            .number()
            .int()
            .min(1)
            .max(31)
            .default(3)
            .describe('Each scheduled run compares the last this many whole UTC days (the reports lag a few hours).'),
        })
        .prefault({}),
      keep_days: days.default(90).describe('Stored results older than this are deleted after each run.'),
    })
    .prefault({})
    .describe("The ledger against the providers' own usage and cost reports (docs/operations/reconciliation.md)."),
  mcp: mcpSchema,
  traces: z
    .strictObject({
      capture_content: z
        .boolean()
        .default(false)
        .describe('Prompts and completions in the request spans (off by default); each attribute capped.'),
      content_max_chars: z
        .number()
        .int()
        .positive()
        .default(16_384)
        .describe('Each content attribute at most this many characters of JSON.'),
    })
    .prefault({})
    .describe('OpenTelemetry traces, on with OTEL_EXPORTER_OTLP_ENDPOINT.'),
  log: z
    .strictObject({
      level: z.enum(LOG_LEVELS).default('info').describe('The least severe level logged; SLUICE_LOG_LEVEL sets it too.'),
      format: z
        .enum(['auto', 'json', 'pretty'])
        .default('auto')
        .describe('`auto`: readable lines on a terminal, JSON lines otherwise.'),
    })
    .prefault({})
    .describe("sluice's own log: JSON lines on stderr, readable lines on a terminal."),
});

/** The config, with the checks across keys (default_tier names a tier, the server's timeouts agree). */
export const configSchema = configObject.superRefine((config, ctx) => {
  const { headers_timeout_s: headers, request_timeout_s: request } = config.server;
  if (request > 0 && headers > request) {
    ctx.addIssue({
      code: 'custom',
      path: ['server', 'headers_timeout_s'],
      message: `${headers} must not exceed server.request_timeout_s (${request}): the headers are part of the request`,
    });
  }
  if (config.default_tier !== undefined && !Object.hasOwn(config.tiers, config.default_tier)) {
    const names = Object.keys(config.tiers);
    ctx.addIssue({
      code: 'custom',
      path: ['default_tier'],
      message: `names no tier of tiers (${names.length ? names.join(', ') : 'none is defined'})`,
    });
  }
  for (const [name, provider] of Object.entries(config.providers)) {
    if (provider.api_keys === undefined) continue;
    if (provider.api_key !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['providers', name, 'api_keys'],
        message: 'is set beside api_key: use one or the other',
      });
    }
    const labels = provider.api_keys.map((k) => k.label);
    for (const [i, label] of labels.entries()) {
      if (labels.indexOf(label) !== i) {
        ctx.addIssue({ code: 'custom', path: ['providers', name, 'api_keys', i, 'label'], message: `'${label}' names two keys` });
      }
    }
  }
  for (const name of Object.keys(config.routes)) {
    if (config.model_list.some((m) => m.model_name === name)) {
      ctx.addIssue({ code: 'custom', path: ['routes', name], message: 'is also a model_list alias: a name means one thing' });
    }
  }
});

export type Config = z.infer<typeof configSchema>;
export type ProviderConfig = z.infer<typeof providerSchema>;
export type PoolKeyConfig = z.infer<typeof poolKeySchema>;
export type TierConfig = z.infer<typeof tierSchema>;
export type RouteConfig = z.infer<typeof routeSchema>;
export type CacheConfig = z.infer<typeof cacheSettingSchema>;
export type TargetParams = z.infer<typeof targetParamsSchema>;
export type ReconcileProviderConfig = z.infer<typeof reconcileProviderSchema>;
