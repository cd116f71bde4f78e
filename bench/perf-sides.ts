/**
 * Where the whole process's CPU goes, the bare pass-through beside `sluice serve --workers 1`:
 * `npx node bench/perf-sides.ts [--mode paced|unary] [--concurrency N] [--seconds S] [--warmup S]`.
 * A V8 profile (`npm run bench -- --profile`) sees the main thread's JavaScript only; this samples
 * every thread of each process with Linux `perf` (`perf record -e cpu-clock -g`, the kernel's
 * clock, so it works on a VM without hardware counters), Node run with `--perf-basic-prof` so
 * JIT frames have names. Each side takes the bench's closed-loop load (load.ts) for the same
 * number of requests after its warm-up, pinned as the bench pins (the proxy on core 0, the fake
 * upstream and this process on core 1), and the samples are printed in µs of a core per request,
 * by where they fell: the kernel, V8's builtins and runtime, GC, sluice's JavaScript, other
 * JavaScript, native code, and the other threads (V8's helpers, the SQLite thread, the thread
 * pool). perf's own cost is in both sides alike. Needs `perf` (Debian's linux-perf) and a built
 * dist/ (`npm run build`); says so and exits 1 without them.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Agent } from 'undici';
import { decidePinning, startChild } from './children.ts';
import { distIsCurrent, startServe } from './gateway-build.ts';
import { runPhase, type Target } from './load.ts';
import { MASTER_KEY, openAIChat, openAIUnary } from './requests.ts';

const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'paced' },
    concurrency: { type: 'string' },
    seconds: { type: 'string', default: '8' },
    warmup: { type: 'string' },
  },
});
const paced = values.mode === 'paced';
if (!paced && values.mode !== 'unary') throw new Error('--mode is paced or unary');
const concurrency = Number(values.concurrency ?? (paced ? 64 : 16));
const seconds = Number(values.seconds);
// TurboFan was still compiling after 3 s of paced load (over half the helper threads' samples).
const warmup = Number(values.warmup ?? (paced ? 20 : 10));
for (const [name, n] of Object.entries({ concurrency, seconds, warmup })) {
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} takes a positive number`);
}
if (spawnSync('perf', ['--version'], { stdio: 'ignore' }).status !== 0) {
  console.error('perf-sides: no `perf` on this machine (apt-get install linux-perf)');
  process.exit(1);
}
if (!distIsCurrent()) {
  console.error('perf-sides: dist/ is missing or older than src/: npm run build');
  process.exit(1);
}

const HZ = 1999;
const model = paced ? 'bench-pace-20' : 'bench';
const request = paced ? openAIChat : openAIUnary;

/** A perf sample's place, from `perf report`'s thread, object and symbol. */
function placeOf(thread: string, symbol: string): string {
  if (thread === 'V8Worker') return "thread: V8's helpers (parallel GC, concurrent marking, TurboFan)";
  if (thread === 'WorkerThread') return 'thread: the SQLite thread';
  if (thread === 'libuv-worker') return 'thread: the thread pool (log writes)';
  if (thread !== 'MainThread') return `thread: ${thread}`;
  if (symbol.startsWith('[k]')) return 'kernel (system calls, loopback TCP, wake-ups)';
  const name = symbol.slice(4);
  if (name.startsWith('JS:')) {
    return /\/(src|dist)\//.test(name) && !name.includes('node_modules')
      ? "sluice's JavaScript"
      : 'other JavaScript (Node, undici, libraries)';
  }
  if (/Scaveng|MarkCompact|Marking|Sweep|Evacuat|Heap::/.test(name)) return 'GC on the main thread';
  if (name.startsWith('Builtins_')) return "V8's builtins (ICs, promises, strings, arrays)";
  if (name.includes('v8::')) return "V8's runtime (JSON, strings, lookups, allocation)";
  return "native: Node's C++, libuv, libc";
}

/** Samples by place, from a perf.data file. */
function places(file: string): Map<string, number> {
  const report = spawnSync(
    'perf',
    ['report', '-i', file, '--no-children', '--sort', 'comm,sym', '-g', 'none', '-q', '-n', '--percent-limit', '0', '-t', '|'],
    { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  );
  const counts = new Map<string, number>();
  for (const line of report.stdout.split('\n')) {
    const [, samples, thread, symbol] = line.split('|').map((field) => field.trim());
    if (!symbol || !/^\d+$/.test(samples)) continue;
    const place = placeOf(thread, symbol);
    counts.set(place, (counts.get(place) ?? 0) + Number(samples));
  }
  return counts;
}

const pinning = decidePinning(true);
const dir = mkdtempSync(join(tmpdir(), 'sluice-perf-'));
const upstream = await startChild<{ type: 'ready'; port: number }>('./upstream-process.ts', { core: pinning.loadCore });
const upstreamOrigin = `http://127.0.0.1:${upstream.ready.port}`;
const bare = await startChild<{ type: 'ready'; port: number }>('./bare-proxy-process.ts', {
  core: pinning.gatewayCore,
  nodeArgs: ['--no-memory-reducer', '--perf-basic-prof'],
  env: { ...process.env, BENCH_UPSTREAM_URL: upstreamOrigin },
});
const configFile = join(dir, 'sluice.yaml');
writeFileSync(
  configFile,
  JSON.stringify({
    server: { host: '127.0.0.1', port: 0 },
    auth: { master_key: MASTER_KEY },
    store: { path: join(dir, 'sluice.db') },
    providers: { up: { base_url: `${upstreamOrigin}/v1`, api_key: 'sk-perf' } },
  }),
);
const sluice = await startServe(configFile, ['--perf-basic-prof'], pinning.gatewayCore);
const sides = [
  { name: 'bare', pid: bare.pid, target: request(`http://127.0.0.1:${bare.ready.port}`, model) },
  { name: 'sluice', pid: sluice.child.pid ?? 0, target: request(`http://127.0.0.1:${sluice.port}`, `up/${model}`) },
];
const agent = new Agent({ connections: concurrency * 2, keepAliveTimeout: 60_000 });
const phase = (target: Target, s: number) =>
  runPhase(target, { dispatcher: agent, concurrency, durationMs: s * 1000, staggerMs: paced ? 20 : 0, validateEvery: 50 });

console.log(
  `perf-sides: ${values.mode} x${concurrency}, ${warmup} s warm-up then ${seconds} s sampled per side; pinning ${pinning.note}`,
);
const perSide: { name: string; requests: number; counts: Map<string, number> }[] = [];
try {
  for (const side of sides) {
    await phase(side.target, warmup);
    const file = join(dir, `${side.name}.data`);
    const perf = spawn('perf', ['record', '-e', 'cpu-clock', '-F', String(HZ), '-g', '-p', String(side.pid), '-o', file], {
      stdio: 'ignore',
    });
    const perfExited = new Promise((resolve) => perf.once('exit', resolve));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const result = await phase(side.target, seconds);
    perf.kill('SIGINT');
    await perfExited;
    if (result.errors > 0) console.log(`${side.name}: ${result.errors} errors (${result.errorSamples.join('; ')})`);
    perSide.push({ name: side.name, requests: result.timings.length, counts: places(file) });
  }
} finally {
  sluice.child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}

const us = (samples: number, requests: number) => (samples / HZ / requests) * 1e6;
const [b, s] = perSide;
const rows = [...new Set([...b.counts.keys(), ...s.counts.keys()])]
  .map((place) => ({ place, bare: us(b.counts.get(place) ?? 0, b.requests), sluice: us(s.counts.get(place) ?? 0, s.requests) }))
  .sort((x, y) => y.sluice - y.bare - (x.sluice - x.bare));
const total = (side: typeof b) =>
  us(
    [...side.counts.values()].reduce((sum, n) => sum + n, 0),
    side.requests,
  );
console.log(`requests sampled: bare ${b.requests}, sluice ${s.requests}; µs of a core per request`);
console.log(`| where | bare | sluice | difference |\n|---|---:|---:|---:|`);
for (const row of rows) {
  console.log(`| ${row.place} | ${row.bare.toFixed(1)} | ${row.sluice.toFixed(1)} | ${(row.sluice - row.bare).toFixed(1)} |`);
}
console.log(`| all | ${total(b).toFixed(1)} | ${total(s).toFixed(1)} | ${(total(s) - total(b)).toFixed(1)} |`);
process.exit(0);
