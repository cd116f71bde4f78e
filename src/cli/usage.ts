/** What `sluice --help` and each command's `--help` print. */
export const usage = {
  main: `sluice: an OpenAI-compatible LLM gateway

Usage:
  sluice serve [--port N] [--host H] [--config FILE]
  sluice pricing <provider/model|alias> [--input N] [--output N] [--cached N] [--config FILE]
  sluice logs [--follow] [--url URL] [--limit N] [--model M] [--provider P] [--outcome ok|error|cancelled]
  sluice --version

Run sluice <command> --help for a command's options.
Environment: PORT, HOST, SLUICE_CONFIG, SLUICE_MASTER_KEY, DATABASE_URL, SLUICE_URL (for logs),
and each provider's key (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...). See README.md.`,

  serve: `Usage: sluice serve [--port N] [--host H] [--config FILE]

Runs the gateway (the default command).
  --port N         port to listen on (PORT; default 8080; 0 picks a free one)
  --host H         address to bind (HOST; default 127.0.0.1). Any non-loopback address needs
                   SLUICE_MASTER_KEY (or auth.master_key in the config)
  --config FILE    the YAML config file (SLUICE_CONFIG)
  -h, --help       this help`,

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
  --outcome O      only ok, error or cancelled
  -h, --help       this help
The gateway's master key is read from SLUICE_MASTER_KEY.`,
} as const;
