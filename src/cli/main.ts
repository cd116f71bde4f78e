import { parseArgs } from 'node:util';
import { serve } from './serve.ts';

const usage = `sluice: an OpenAI-compatible LLM gateway

Usage:
  sluice serve [--port N] [--host H] [--config FILE]

Environment: PORT, HOST, SLUICE_CONFIG, SLUICE_MASTER_KEY, and each provider's key
(OPENAI_API_KEY, GROQ_API_KEY, ...). See README.md.`;

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
  case 'help':
  case '--help':
  case '-h':
    console.log(usage);
    break;
  default:
    console.error(`Unknown command: ${command}\n\n${usage}`);
    process.exitCode = 2;
}
