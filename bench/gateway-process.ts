/**
 * sluice's real server (createGateway, default config: ledger on, in an embedded SQLite file at
 * `BENCH_STORE_PATH`) in its own process, with one OpenAI-compatible provider `up` on the fake
 * upstream (`BENCH_UPSTREAM_URL`). The environment can enable more providers (the bench sets
 * ANTHROPIC_BASE_URL/ANTHROPIC_API_KEY). Answers CPU/RSS samples over IPC, and records a CPU
 * profile between `profile-start` and `profile-stop` (so that startup and warm-up stay out of
 * it); stops when the parent closes the channel.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { configSchema } from '../src/config/schema.ts';
import { createGateway } from '../src/server/app.ts';
import { answerSamples } from './process-sample.ts';

const upstream = process.env.BENCH_UPSTREAM_URL;
const storePath = process.env.BENCH_STORE_PATH;
if (!upstream || !storePath) throw new Error('BENCH_UPSTREAM_URL and BENCH_STORE_PATH must be set');

const config = configSchema.parse({
  server: { host: '127.0.0.1', port: 0 },
  store: { path: storePath },
  ledger: { enabled: process.env.BENCH_LEDGER !== 'off' },
  providers: { up: { base_url: `${upstream}/v1`, api_key: 'sk-bench' } },
});
const gateway = createGateway(config, process.env);
const address: AddressInfo = await gateway.listen();

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  setTimeout(() => process.exit(0), 3000).unref();
  await gateway.shutdown(0);
  process.exit(0);
}

let profiler: Session | undefined;
process.on('message', async (msg: { type: string; id?: number; path?: string }) => {
  if (msg.type === 'profile-start') {
    profiler = new Session();
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
  } else if (msg.type === 'profile-stop' && profiler && msg.path) {
    const { profile } = await profiler.post('Profiler.stop');
    writeFileSync(msg.path, JSON.stringify(profile));
    profiler.disconnect();
    profiler = undefined;
  } else return;
  process.send?.({ type: msg.type, id: msg.id });
});

answerSamples();
process.on('disconnect', () => void stop());
process.send?.({ type: 'ready', port: address.port });
