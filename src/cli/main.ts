import { parseArgs } from 'node:util';
import { logs } from './logs.ts';
import { pricing } from './pricing.ts';
import { serve } from './serve.ts';

const usage = `sluice: an OpenAI-compatible LLM gateway

Usage:
  sluice serve [--port N] [--host H] [--config FILE]
  sluice pricing <provider/model|alias> [--input N] [--output N] [--cached N] [--config FILE]
  sluice logs [--follow] [--url URL] [--limit N] [--model M] [--provider P] [--outcome ok|error|cancelled]

Environment: PORT, HOST, SLUICE_CONFIG, SLUICE_MASTER_KEY, DATABASE_URL, SLUICE_URL (for logs),
and each provider's key (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...). See README.md.`;

const [command, ...rest] = process.argv.slice(2);

switch (command) {
  case 'serve':
  case undefined: {
    const { values } = parseArgs({
      args: rest,
      options: { port: { type: 'string' }, host: { type: 'string' }, config: { type: 'string' } },
    });
    await serve({ port: values.port === undefined ? undefined : Number(values.port), host: values.host, config: values.config });
    break;
  }
  case 'pricing': {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        input: { type: 'string', default: '1000000' },
        output: { type: 'string', default: '1000000' },
        cached: { type: 'string', default: '0' },
        config: { type: 'string' },
      },
    });
    if (!positionals[0]) {
      console.error(usage);
      process.exitCode = 2;
      break;
    }
    pricing({
      model: positionals[0],
      config: values.config,
      input: Number(values.input),
      output: Number(values.output),
      cached: Number(values.cached),
    });
    break;
  }
  case 'logs': {
    const { values } = parseArgs({
      args: rest,
      options: {
        follow: { type: 'boolean', short: 'f', default: false },
        url: { type: 'string' },
        limit: { type: 'string', default: '20' },
        model: { type: 'string' },
        provider: { type: 'string' },
        outcome: { type: 'string' },
      },
    });
    const port = process.env.PORT ?? '8080';
    await logs({
      url: values.url ?? process.env.SLUICE_URL ?? `http://127.0.0.1:${port}`,
      key: process.env.SLUICE_MASTER_KEY,
      limit: Number(values.limit),
      follow: values.follow,
      filters: { model: values.model, provider: values.provider, outcome: values.outcome },
    });
    break;
  }
  case 'help':
  case '--help':
  case '-h':
    console.log(usage);
    break;
  default:
    console.error(`Unknown command: ${command}\n\n${usage}`);
    process.exitCode = 2;
}
