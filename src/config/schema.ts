import { z } from 'zod';

// Every object is strict: an unknown key is an error with a did-you-mean (describe-issue.ts),
// never silently ignored.

const seconds = z.number().nonnegative();

/** `https://app.example.com` as a browser sends it in Origin: scheme, host, port; no path, no slash. */
const isOrigin = (value: string): boolean => {
  if (value === '*') return true;
  try {
    return new URL(value).origin === value;
  } catch {
    return false;
  }
};

const providerSchema = z.strictObject({
  /** `openai-compatible` for a server declared in the config; presets infer their own type. */
  type: z.enum(['openai-compatible']).optional(),
  api_key: z.string().optional(),
  base_url: z.url().optional(),
  /** Extra headers sent upstream (e.g. OpenRouter's HTTP-Referer). */
  headers: z.record(z.string(), z.string()).optional(),
  /** `keep` leaves `<think>` tags in content (default); `reasoning` moves them to reasoning_content. */
  think_tags: z.enum(['keep', 'reasoning']).optional(),
  /** Some servers reject `stream_options`; they still usually send usage on their own. */
  stream_options: z.boolean().optional(),
  /** Native providers: drop request parameters the provider cannot honour instead of answering 400. */
  drop_params: z.boolean().optional(),
  /** Bedrock: the AWS region (else AWS_REGION). */
  region: z.string().optional(),
  /** OpenAI-compatible upstreams that implement /v1/responses themselves: relay it (events as sent). */
  responses_api: z.boolean().optional(),
  /** Static model ids for GET /v1/models. */
  models: z.array(z.string()).optional(),
});

/** A spending limit over a calendar period (UTC): the key's own spend, or its whole project's. */
const tierBudgetSchema = z.strictObject({
  scope: z.enum(['key', 'project']).default('key'),
  period: z.enum(['day', 'month']),
  limit_usd: z.number().positive(),
});

/** Per-minute and in-flight limits; `undefined`: unlimited. */
const rateLimitsShape = {
  requests_per_minute: z.number().int().positive().optional(),
  /** Prompt (counted up front) plus output tokens, reconciled with the real usage at the end. */
  tokens_per_minute: z.number().int().positive().optional(),
  concurrent_requests: z.number().int().positive().optional(),
};

/** What a tier grants (README "Tiers, limits and budgets"). */
const tierSchema = z.strictObject({
  /** The request deadline, replacing stream.deadline_s / responses.deadline_s; the error names the tier. */
  deadline_s: seconds.optional(),
  /** Replaces stream.idle_timeout_s. */
  idle_timeout_s: seconds.optional(),
  /** Limits per key. */
  ...rateLimitsShape,
  /** The same limits over all the keys of a project together. */
  project: z.strictObject(rateLimitsShape).optional(),
  budgets: z.array(tierBudgetSchema).default([]),
  /** A stream the client abandoned: bill what was generated, or charge nothing (cost 0, `billing: void`). */
  abandoned_streams: z.enum(['bill_generated', 'void']).default('bill_generated'),
  /** With Redis unreachable: admit without the shared limits, or refuse with 503. */
  redis_unavailable: z.enum(['fail_open', 'fail_closed']).default('fail_open'),
  /** Replaces stream.on_disconnect for this tier's streams. */
  on_disconnect: z.enum(['cancel', 'drain']).optional(),
});

/** Request parameters a route target sets in place of the client's (README "Routes and fallback"). */
const targetParamsSchema = z.strictObject({
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().min(0).max(1).optional(),
  max_tokens: z.number().int().positive().optional(),
  max_completion_tokens: z.number().int().positive().optional(),
  reasoning_effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']).optional(),
  seed: z.number().int().optional(),
});

const routeSchema = z.strictObject({
  /** `ordered`: a fallback chain in the order written. `weighted`: spread over the healthy targets by weight. */
  strategy: z.enum(['ordered', 'weighted']).default('ordered'),
  targets: z
    .array(
      z.strictObject({
        model: z.string().regex(/^[^/]+\/.+$/, 'must be provider/model'),
        weight: z.number().positive().default(1),
        /** No first output token within this long: the attempt is abandoned for the next target. */
        ttft_timeout_s: z.number().positive().optional(),
        /** A non-streamed answer not complete within this long: the attempt is abandoned for the next target. */
        timeout_s: z.number().positive().optional(),
        params: targetParamsSchema.optional(),
      }),
    )
    .min(1),
  /** Requests with the same prompt_cache_key (or user) go to the same healthy target. */
  sticky: z.boolean().default(false),
});

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

const configObject = z.strictObject({
  server: z
    .strictObject({
      host: z.string().default('127.0.0.1'),
      port: z.number().int().min(0).max(65535).default(8080),
      body_limit_bytes: z
        .number()
        .int()
        .positive()
        .default(20 * 1024 * 1024),
      drain_timeout_s: seconds.default(30),
      /** Host names answered (`*.example.com`: any subdomain); empty: any with a key, loopback only without. */
      allowed_hosts: z
        .array(
          z
            .string()
            .regex(
              /^(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$|^\[[0-9a-f:.]+\]$/i,
              'must be a host name, *.domain, an IP or [IPv6], without a port',
            ),
        )
        .default([]),
      /** Browser origins allowed by CORS (`https://app.example.com`), or "*"; empty: CORS off. */
      cors_origins: z
        .union([z.literal('*'), z.array(z.string().refine(isOrigin, 'must be an origin (scheme://host[:port], no path) or "*"'))])
        .default([]),
      /** Past this many open connections, new ones are closed at once. */
      max_connections: z.number().int().positive().default(10_000),
      /** A client must send its request headers within this (slowloris), and the whole request within the next. */
      headers_timeout_s: seconds.default(10),
      request_timeout_s: seconds.default(60),
      /** The listen queue length (the kernel caps it at net.core.somaxconn). */
      backlog: z.number().int().positive().default(2048),
    })
    .prefault({}),
  auth: z
    .strictObject({
      /** Empty (`${SLUICE_MASTER_KEY:-}` with the variable unset) means no key, as if not written. */
      master_key: z
        .string()
        .optional()
        .transform((key) => key || undefined),
      /**
       * The server-side secret of the keyed hash that gateway-issued keys are stored as
       * (SLUICE_KEY_PEPPER sets it too). Set it before creating keys: changing it invalidates them.
       */
      key_pepper: z
        .string()
        .optional()
        .transform((pepper) => pepper || undefined),
      /** How long an instance trusts a verified key before reading it again (a revocation elsewhere takes this long). */
      key_cache_ttl_s: seconds.max(300).default(10),
    })
    .prefault({}),
  stream: z
    .strictObject({
      heartbeat_s: seconds.default(15),
      idle_timeout_s: seconds.default(120),
      deadline_s: seconds.default(600),
      error_style: z.enum(['data', 'event']).default('data'),
      usage: z.enum(['opt_in', 'always']).default('opt_in'),
      /** `openai`: the strict OpenAI chunk shape. `accounting`: reference/accounting-events.txt. */
      profile: z.enum(['openai', 'accounting']).default('openai'),
      /** Adds `cost_usd` and `estimated` to the openai profile's usage object (strict clients may reject them). */
      usage_extensions: z.boolean().default(false),
      /**
       * An upstream's `x_*` vendor events among the chunks (research steps, artifacts): dropped, as
       * strict clients may choke on them, or passed through unchanged and in order.
       */
      vendor_events: z.enum(['drop', 'passthrough']).default('drop'),
      /**
       * A client that leaves a stream: `cancel` aborts the upstream at once; `drain` reads it to its
       * end (within the deadline) so that its usage is exact, then records it (README "Disconnect policy").
       */
      on_disconnect: z.enum(['cancel', 'drain']).default('cancel'),
      /** Resumable streams (README "Resuming a stream"): recent streams' frames are kept for GET /v1/streams/{id}. */
      resume: z
        .strictObject({
          enabled: z.boolean().default(false),
          /** At most this many streams are kept (the oldest goes first). */
          buffer_streams: z.number().int().positive().default(1_000),
          /** At most this many bytes of frames (64 MiB), over every kept stream (one stream larger than this is not kept). */
          buffer_bytes: z.number().int().positive().default(67_108_864),
          /** A stream is kept this long after its last frame. */
          ttl_s: seconds.default(300),
          /** A stream whose client went away goes on this long (then is cancelled), so that the client can resume it. */
          grace_s: seconds.default(30),
        })
        .prefault({}),
    })
    .prefault({}),
  responses: z
    .strictObject({
      /** The Responses surface's request deadline (its reference says 2 minutes). */
      deadline_s: seconds.default(120),
    })
    .prefault({}),
  store: z
    .strictObject({
      /** PostgreSQL (many instances); else (or empty) the embedded SQLite file below. DATABASE_URL sets it too. */
      database_url: z
        .string()
        .optional()
        .transform((url) => url || undefined),
      path: z.string().default('.sluice/sluice.db'),
      /** PostgreSQL: give up on a connection attempt after this long. */
      connect_timeout_ms: z.number().int().positive().default(5_000),
      /** PostgreSQL: give up on a query after this long (ends a query on a half-open connection). */
      query_timeout_ms: z.number().int().positive().default(10_000),
    })
    .prefault({}),
  ledger: z
    .strictObject({
      enabled: z.boolean().default(true),
      /** Keep prompts and completions in the request log (off by default), capped per record. */
      store_content: z.boolean().default(false),
      content_max_chars: z.number().int().positive().default(16_384),
      flush_interval_ms: z.number().int().positive().default(200),
      batch_size: z.number().int().positive().default(500),
      max_buffered: z.number().int().positive().default(100_000),
      /** On shutdown, write what is buffered for at most this long, then log what was lost. */
      shutdown_flush_ms: z.number().int().positive().default(10_000),
      /** Journal every record to local disk before acknowledging it (README "Ledger durability"). */
      durable: z.boolean().default(false),
      /** The journal's directory (turns the durable mode on); default: ledger-journal beside store.path. */
      journal: z.string().min(1).optional(),
      /** fdatasync the journal at most every this many ms (0: after every record). */
      journal_sync_ms: z.number().int().nonnegative().default(100),
      /** Write the progress of running requests to the journal at most every this many ms. */
      journal_progress_ms: z.number().int().positive().default(1_000),
    })
    .prefault({}),
  /** Prices per million tokens for `provider/model`, overriding or adding to the registry. */
  pricing: z
    .record(
      z.string().regex(/^[^/]+\/.+$/, 'must be provider/model'),
      z.strictObject({
        input_mtok: z.number().nonnegative(),
        output_mtok: z.number().nonnegative(),
        cache_read_mtok: z.number().nonnegative().optional(),
        cache_write_mtok: z.number().nonnegative().optional(),
      }),
    )
    .default({}),
  upstream: z
    .strictObject({
      connect_timeout_s: seconds.default(10),
      /** Upper bound for the upstream's response headers (reasoning models can think a while). */
      headers_timeout_s: seconds.default(300),
    })
    .prefault({}),
  providers: z.record(z.string().regex(/^[a-z0-9][a-z0-9_.-]*$/), providerSchema).default({}),
  model_list: z
    .array(z.strictObject({ model_name: z.string().min(1), model: z.string().regex(/^[^/]+\/.+$/, 'must be provider/model') }))
    .default([]),
  /** Public model names served by one or more targets, with fallback and balancing (README "Routes and fallback"). */
  routes: z.record(z.string().min(1), routeSchema).default({}),
  /** Health of route targets: the circuit breaker's thresholds. */
  routing: z
    .strictObject({
      /** Consecutive failures that open a target's breaker. */
      breaker_failures: z.number().int().positive().default(3),
      /** How long an open breaker skips its target before one probe request is let through. */
      breaker_open_s: seconds.default(30),
    })
    .prefault({}),
  /** Tiers by name; a key or project names its tier, else `default_tier` applies. */
  tiers: z
    .record(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'must be a name of letters, digits, _ . -'), tierSchema)
    .default({}),
  default_tier: z.string().min(1).optional(),
  limits: z
    .strictObject({
      /** Limits and reservations shared by every instance; empty: in memory (one process). REDIS_URL sets it too. */
      redis_url: z
        .string()
        .optional()
        .transform((url) => url || undefined),
      /** A Redis answer slower than this counts as Redis unreachable (the tier's redis_unavailable applies). */
      redis_timeout_ms: z.number().int().positive().default(250),
      /** Prefix of every Redis key sluice writes (several gateways, or tests, sharing one Redis). */
      redis_prefix: z.string().min(1).default('sluice:'),
      /** The output a budget reserves for a request without max_tokens (tokens). */
      reserve_output_tokens: z.number().int().positive().default(4096),
    })
    .prefault({}),
  /** GET /metrics in Prometheus' text format (README "Metrics"). */
  metrics: z
    .strictObject({
      enabled: z.boolean().default(true),
      /** Open to anyone who reaches the port (a scraper without a key); else the master key or an admin key. */
      public: z.boolean().default(false),
      /** Distinct unpriced models (and projects) with their own label; later ones are counted as `other`. */
      max_label_values: z.number().int().positive().default(100),
    })
    .prefault({}),
  /** OpenTelemetry traces, on with OTEL_EXPORTER_OTLP_ENDPOINT (README "Traces (OpenTelemetry)"). */
  traces: z
    .strictObject({
      /** Prompts and completions in the request spans (off by default); each attribute capped. */
      capture_content: z.boolean().default(false),
      content_max_chars: z.number().int().positive().default(16_384),
    })
    .prefault({}),
  /** sluice's own log (README "Logs"): JSON lines on stderr, readable lines on a terminal. */
  log: z
    .strictObject({
      /** SLUICE_LOG_LEVEL sets it too. */
      level: z.enum(LOG_LEVELS).default('info'),
      format: z.enum(['auto', 'json', 'pretty']).default('auto'),
    })
    .prefault({}),
});

/** The config, with the checks across sections (default_tier names a tier). */
export const configSchema = configObject.superRefine((config, ctx) => {
  if (config.default_tier !== undefined && !Object.hasOwn(config.tiers, config.default_tier)) {
    const names = Object.keys(config.tiers);
    ctx.addIssue({
      code: 'custom',
      path: ['default_tier'],
      message: `names no tier of tiers (${names.length ? names.join(', ') : 'none is defined'})`,
    });
  }
  for (const name of Object.keys(config.routes)) {
    if (config.model_list.some((m) => m.model_name === name)) {
      ctx.addIssue({ code: 'custom', path: ['routes', name], message: 'is also a model_list alias: a name means one thing' });
    }
  }
});

export type Config = z.infer<typeof configSchema>;
export type ProviderConfig = z.infer<typeof providerSchema>;
export type TierConfig = z.infer<typeof tierSchema>;
export type RouteConfig = z.infer<typeof routeSchema>;
export type TargetParams = z.infer<typeof targetParamsSchema>;
