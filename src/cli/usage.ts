/** What `sluice --help` and each command's `--help` print. */
export const usage = {
  main: `sluice: an OpenAI-compatible LLM gateway

Usage:
  sluice serve [--port N] [--host H] [--config FILE] [--workers N|auto]
  sluice config check [FILE]
  sluice pricing <provider/model|alias> [--input N] [--output N] [--cached N] [--config FILE]
  sluice logs [--follow] [--url URL] [--limit N] [--model M] [--provider P] [--outcome ok|error|cancelled]
  sluice spend [--group-by project,key,model,tag,provider_key] [--period hour|day|month] [--from T] [--to T] [--csv]
  sluice audit [--url URL] [--limit N] [--actor A] [--action A] [--target-type T] [--target-id I] [--from T] [--to T] [--json]
  sluice reconcile --provider NAME [--from DAY] [--to DAY] [--url URL] [--json]
  sluice check <file|url|-> [--json] [--kind chat|responses|messages|media] [--data body.json] [--key K]
  sluice projects create|list|update|delete ...
  sluice keys create|list|update|disable|enable|revoke|rotate|delete ...
  sluice endpoints create|list|update|delete ...
  sluice --version

Run sluice <command> --help for a command's options.
Environment: PORT, HOST, SLUICE_CONFIG, SLUICE_MASTER_KEY, SLUICE_KEY_PEPPER, DATABASE_URL,
SLUICE_URL (for logs, spend, audit, reconcile, projects, keys and endpoints),
and each provider's key (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...). Docs: README.md, docs/.`,

  serve: `Usage: sluice serve [--port N] [--host H] [--config FILE] [--workers N|auto]

Runs the gateway (the default command).
  --port N         port to listen on (PORT; default 8080; 0 picks a free one)
  --host H         address to bind (HOST; default 127.0.0.1). Any non-loopback address needs
                   SLUICE_MASTER_KEY (or auth.master_key in the config)
  --config FILE    the YAML config file (SLUICE_CONFIG)
  --workers N      processes serving the port (SLUICE_WORKERS; default and auto: one per core;
                   1: one process): a supervisor restarts a crashed one and drains them all on
                   SIGTERM. Tiers with limits or budgets need REDIS_URL for more than one (by
                   default sluice then serves one process: docs/operations/scale-out.md)
  -h, --help       this help
SIGHUP (to the process, or to the supervisor of workers) reads the config again and applies it to
the requests to come; a config that does not load is refused and the running one kept (so does
POST /admin/reload; docs/operations/reload.md).`,

  config: `Usage: sluice config check [FILE]

Checks a config file as sluice serve would load it (FILE, else SLUICE_CONFIG; none: the defaults
and the environment): the schema, every \${VAR}, the providers, the routes' targets and a
non-loopback host without a key. Opens no store, no Redis connection and no port.
Prints every problem on its own line with its key path and what to do (stderr), exit 1;
or one line with the providers enabled, the routes, aliases and tiers, exit 0.
  -h, --help       this help
Exit code: 0 the config is fine, 1 problems found, 2 a bad command line.`,

  pricing: `Usage: sluice pricing <provider/model|alias> [--input N] [--output N] [--cached N] [--config FILE]

Shows what sluice charges for a model and where the price comes from.
  --input N        input tokens (default 1000000)
  --output N       output tokens (default 1000000)
  --cached N       of the input tokens, how many were cache reads (default 0)
  --config FILE    the YAML config file, for pricing overrides and aliases (SLUICE_CONFIG)
  -h, --help       this help`,

  logs: `Usage: sluice logs [--follow] [--url URL] [--limit N] [--model M] [--provider P] [--outcome O]

Prints the recent requests of a running gateway from its request log (oldest first), one a line.
  -f, --follow     then print every request as it ends, exactly once, until interrupted
  --url URL        the gateway (SLUICE_URL; default http://127.0.0.1:$PORT, PORT default 8080)
  --limit N        how many recent requests to print first, 1 to 1000 (default 20)
  --model M        only this model: the name the client used (mock/echo, an alias) or the provider's
  --provider P     only this provider
  --outcome O      only ok, error, cancelled or interrupted
  -h, --help       this help
The gateway's master key is read from SLUICE_MASTER_KEY.`,

  spend: `Usage: sluice spend [--group-by G] [--period hour|day|month] [--from T] [--to T] [--csv] [--url URL]

Prints a running gateway's spend (GET /v1/spend, from its hourly and daily rollups): one line per
group, costliest first, then the total.
  --group-by G     project, key, model, tag and/or provider_key, comma-separated (default: the total only)
  --period P       hour, day (default) or month (UTC)
  --from T         from this time: ISO 8601 or epoch ms (default: 24 hours, 30 days or 12 months back)
  --to T           up to this time (default: now)
  --csv            print the report as CSV, a line per group and period
  --url URL        the gateway (SLUICE_URL; default http://127.0.0.1:$PORT, PORT default 8080)
  -h, --help       this help
The gateway's master key (or a project's key: its project's spend) is read from SLUICE_MASTER_KEY.`,
  audit: `Usage: sluice audit [--url URL] [--limit N] [--actor A] [--action A] [--target-type T] [--target-id I]
                    [--from T] [--to T] [--json]

Prints the recent entries of a running gateway's audit log (oldest first), one a line: when, who,
the action, its target, the client, the request id and the changed fields (never a secret).
  --url URL          the gateway (SLUICE_URL; default http://127.0.0.1:$PORT, PORT default 8080)
  --limit N          how many recent entries, 1 to 1000 (default 20)
  --actor A          only this actor: master, or a key id
  --action A         only this action: key.create, key.revoke, console.sign_in_failed, ...
  --target-type T    only targets of this type: project, key, endpoint, config, console
  --target-id I      only this target (a key id, a project id, project/endpoint)
  --from T, --to T   only from (inclusive) / to (exclusive) this time: ISO 8601 or epoch ms
  --json             the API's entries as JSON, newest first
  -h, --help         this help
The master key (or an admin key) is read from SLUICE_MASTER_KEY (docs/operations/audit-log.md).`,

  reconcile: `Usage: sluice reconcile --provider NAME [--from DAY] [--to DAY] [--url URL] [--json]

Reconciles a running gateway's ledger against the provider's own usage and cost report
(reconcile.providers in its config) over whole UTC days, stores the result, and prints both sides
per day and model: input, cached and output tokens, cost, the drift in USD and percent, the lines
the ledger priced at 0 that the provider billed, and the days one side has no rows for.
  --provider NAME    the ledger's provider name, as under reconcile.providers (openai, anthropic, ...)
  --from DAY         the first UTC day, YYYY-MM-DD (default: --to)
  --to DAY           the last UTC day, inclusive (default: yesterday)
  --url URL          the gateway (SLUICE_URL; default http://127.0.0.1:$PORT, PORT default 8080)
  --json             the stored result as JSON
  -h, --help         this help
The master key (or an admin key) is read from SLUICE_MASTER_KEY (docs/operations/reconciliation.md).
Exit code: 0 within reconcile.threshold, 1 past it, 2 nothing reconciled (a bad command line, no
gateway, a report that could not be read).`,

  check: `Usage: sluice check <file|url|-> [--json] [--kind chat|responses|messages|media] [--data body.json] [--key K]

Checks a chat-completions or Responses stream (SSE) against the stream contract and prints every
violation with its frame number: role first, one stable id, tool-call indexes with id and name on
their first delta, one finish per choice, usage after the finish, an error frame then [DONE],
nothing after [DONE]; Responses: sequence_number counting by one, every added closed by its done,
exactly one terminal event. \`: heartbeat\` comments, \`id:\` lines and x_ vendor events are allowed.
  <file>           a recorded body; - reads stdin (e.g. curl -sN ... | sluice check -)
  <url>            fetched with GET, or POSTed the JSON in --data; its answer must be a stream
  --data FILE      POST this request body (it must ask for "stream": true)
  --key K          sent as Authorization: Bearer K (SLUICE_API_KEY)
  --kind K         chat, responses, messages or media, instead of telling them apart from the first frames
  --json           print {source, kind, frames, conforming, violations: [{frame, rule, message}]}
  -h, --help       this help
Exit code: 0 conforming, 1 violations found, 2 the stream could not be read (or a bad command line).`,

  projects: `Usage: sluice projects create <name> [--id ID] [--tier T] [--daily-usd X] [--monthly-usd X] [--json]
       sluice projects list [--json]
       sluice projects update <id> [--name N] [--tier T] [--models a,b] [--metadata JSON]
                              [--daily-usd X] [--monthly-usd X] [--json]
       sluice projects delete <id> [--force] [--json]

Creates, lists, edits and deletes the projects of a running gateway (its admin API).
  --id ID          the project id, used in endpoint URLs (default: proj_ and 12 random hex digits)
  --tier T         the tier of the project's keys that name none (a name under tiers: in the config)
  --daily-usd X    the project's budget per UTC day; --monthly-usd X per calendar month
  --models a,b     (update) the models of its keys that list none of their own
  --metadata JSON  (update) the operator's own labels, e.g. '{"owner":"ops"}'
  update           changes the fields given; none clears one (--tier none, --daily-usd none)
  delete           refused while the project has live keys, unless --force deletes them with it;
                   its requests and spend stay in the request log, its id stays taken
  --url URL        the gateway (SLUICE_URL; default http://127.0.0.1:$PORT, PORT default 8080)
  --json           print the API's JSON
  -h, --help       this help
The master key (or an admin key) is read from SLUICE_MASTER_KEY. create prints the project id.`,

  keys: `Usage: sluice keys create --project P [--name N] [--tier T] [--models a,b] [--expires-in 30d]
                          [--daily-usd X] [--monthly-usd X] [--admin] [--json]
       sluice keys list [--project P] [--deleted] [--json]
       sluice keys update <key_id> [--name N] [--tier T] [--models a,b] [--expires-in 30d]
                          [--daily-usd X] [--monthly-usd X] [--json]
       sluice keys disable|enable|delete <key_id> [--json]
       sluice keys revoke <key_id> [--json]
       sluice keys rotate <key_id> [--grace 1h] [--json]

Manages the gateway-issued keys (sk-sluice-...) of a running gateway (its admin API).
  create           prints the new key, alone on stdout: it is shown only this once
  list             id, project, tier, status (active, disabled, revoked, expired), times; never
                   a key; --deleted lists the deleted keys too
  update           changes the fields given; none clears one (--models none, --expires-in none)
  disable          refused (401 api_key_disabled) within a second everywhere, until enable
  delete           refused like an unknown key, gone from list; its requests and spend stay
  revoke           refused at once on that gateway, within auth.key_cache_ttl_s on the others
  rotate           a new secret for the same key id (printed like create); the old one stops
                   at once, or after --grace (90s, 30m, 12h, 7d at most)
  --project P      the key's project (sluice projects list)
  --models a,b     the only models the key may use, as clients name them (aliases, provider/model)
  --expires-in D   the key stops working after D (90s, 30m, 12h, 30d)
  --tier T, --daily-usd X, --monthly-usd X: the key's own tier and budgets
  --admin          the key may call the admin API (these commands)
  --url URL        the gateway (SLUICE_URL; default http://127.0.0.1:$PORT, PORT default 8080)
  --json           print the API's JSON
  -h, --help       this help
The master key (or an admin key) is read from SLUICE_MASTER_KEY.`,

  endpoints: `Usage: sluice endpoints create --project P --name N --model M [--profile NAME]
                               [--usage opt_in|always] [--error-style data|event]
                               [--vendor-events drop|passthrough]
                               [--cache-ttl DURATION [--cache-max-bytes N]] [--json]
       sluice endpoints list [--project P] [--json]
       sluice endpoints update --project P --name N [--model M] [--profile NAME] [--usage U]
                               [--error-style S] [--vendor-events V]
                               [--cache-ttl DURATION|none [--cache-max-bytes N]] [--json]
       sluice endpoints delete --project P --name N [--json]

A project's endpoint is served at /{project}/{name}/v1/chat/completions and /responses: a client
sets its base URL to that /v1 and may send a bare model name (or none) for the endpoint's model.
  --model M        an alias or provider/model: the endpoint's default model
  --profile NAME   the endpoint's stream profile: openai, chat-streaming-usage, chat-streaming-full,
                   chat-streaming-always-usage, accounting or responses-streaming (docs/streams/
                   profiles.md; default: the config's stream.profile)
  --usage, --error-style, --vendor-events: set apart, they win over the profile's
  --cache-ttl D    answer identical requests through the endpoint from the response cache for D
                   (90s, 30m, 12h or seconds; none: off); --cache-max-bytes N: the largest
                   answer kept (default 1048576). A route's cache wins over it, it over a tier's
                   (docs/operations/response-cache.md)
  update           changes the fields given; none goes back to the config's (--profile none)
  --url URL        the gateway (SLUICE_URL; default http://127.0.0.1:$PORT, PORT default 8080)
  --json           print the API's JSON
  -h, --help       this help
The master key (or an admin key) is read from SLUICE_MASTER_KEY. create prints the base URL.`,
} as const;
