/**
 * The bench's gateway as `sluice serve --workers N` runs it (`npm run bench -- --workers N`): this
 * process is a thin supervisor that accepts nothing, and N cluster workers each run
 * gateway-process.ts on the one port (SO_REUSEPORT). To run.ts it answers as gateway-process.ts
 * does: one `ready` (the first worker's port and key), `sample` as the sum of every process
 * (CPU and RSS: what N workers cost together), and profiles of the first worker only.
 */
import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import type { ProcessSample } from './process-sample.ts';

const count = Number(process.env.BENCH_WORKERS);
if (!Number.isInteger(count) || count < 2) throw new Error('BENCH_WORKERS must be 2 or more');

interface WorkerReady {
  type: 'ready';
  port: number;
  governedKey: string;
}

cluster.setupPrimary({ exec: fileURLToPath(new URL('./gateway-process.ts', import.meta.url)) });

let nextId = 1;
/** Sends a message to one worker and resolves with its reply of the same type and id. */
function ask<T>(worker: Worker, message: { type: string; [key: string]: unknown }): Promise<T> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const onExit = () => reject(new Error(`gateway worker ${worker.id} exited`));
    const onMessage = (reply: { type: string; id?: number }) => {
      if (reply.type !== message.type || reply.id !== id) return;
      worker.off('message', onMessage);
      worker.off('exit', onExit);
      resolve(reply as T);
    };
    worker.on('message', onMessage);
    worker.once('exit', onExit);
    worker.send({ ...message, id });
  });
}

function fork(slot: number, port: number): Promise<{ worker: Worker; ready: WorkerReady }> {
  const worker = cluster.fork({ BENCH_WORKER_SLOT: String(slot), BENCH_WORKER_PORT: String(port), BENCH_REDIS_URL: '' });
  return new Promise((resolve, reject) => {
    worker.on('message', (msg: { type: string }) => {
      if (msg.type === 'ready') resolve({ worker, ready: msg as WorkerReady });
    });
    worker.once('exit', (code) => reject(new Error(`gateway worker ${slot} exited (${code}) before it was ready`)));
  });
}

// The first worker alone: it migrates the store, binds a free port and issues the governed key.
const first = await fork(0, 0);
const others = await Promise.all(Array.from({ length: count - 1 }, (_, i) => fork(i + 1, first.ready.port)));
const workers = [first.worker, ...others.map((o) => o.worker)];

process.on('message', async (msg: { type: string; id?: number; path?: string }) => {
  if (msg.type === 'sample') {
    const own = process.cpuUsage();
    const rss = process.memoryUsage.rss();
    const samples = await Promise.all(workers.map((w) => ask<ProcessSample>(w, { type: 'sample' })));
    const sum = (field: 'userUs' | 'systemUs' | 'rss' | 'peakRss' | 'maxRss') =>
      samples.reduce((total, s) => total + s[field], 0);
    const reply: ProcessSample = {
      type: 'sample',
      id: msg.id ?? 0,
      userUs: own.user + sum('userUs'),
      systemUs: own.system + sum('systemUs'),
      rss: rss + sum('rss'),
      peakRss: rss + sum('peakRss'),
      maxRss: process.resourceUsage().maxRSS * 1024 + sum('maxRss'),
    };
    process.send?.(reply);
  } else if (msg.type === 'profile-start' || msg.type === 'profile-stop') {
    await ask(first.worker, { type: msg.type, path: msg.path });
    process.send?.({ type: msg.type, id: msg.id });
  }
});
// run.ts owns this process: when its channel closes, the workers go with it (their own channel closes).
process.on('disconnect', () => process.exit(0));
process.send?.({
  type: 'ready',
  port: first.ready.port,
  // A worker's gateways share its one port: the plain gateway serves the governed key too.
  governedPort: first.ready.port,
  governedKey: first.ready.governedKey,
  redis: { skipped: `not with --workers (${count} workers)` },
});
