/**
 * `npm run bench -- --soak`: many slow streams held open at once through one gateway process
 * (issue 15: 10,000 streams, one token per second, heartbeats on, in < 1 GiB with no error),
 * bounded in time, printing the gateway's RSS over time and per open stream.
 * docs/benchmarks/soak.md says how to read it.
 *
 * The gateway is sluice's own CLI (`bin/sluice.js serve` with a config file), as `npm start` runs
 * it, and its memory is read from /proc. The fake upstream is a child process
 * (upstream-process.ts); this process is the load generator.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Agent } from 'undici';
import { startChild } from './children.ts';
import { distIsCurrent, procCpuSeconds, procStatus, root, startServe } from './gateway-build.ts';
import { foreignCores, markLoad } from './machine-load.ts';

export interface SoakOptions {
  streams: number;
  seconds: number;
  log: (line: string) => void;
  /** Where the gateway's ledger and config go (a temporary folder by default). */
  dir?: string;
  /** The open-file limit to split the streams by (default: this process's, which its children inherit). */
  fdLimit?: number;
  /** Node options for the gateway process alone (V8 heap flags to compare, e.g. `--max-semi-space-size=8`). */
  nodeArgs?: string[];
  /**
   * Seconds over which the streams open (default 40% of the run). A short run on a loaded machine
   * opens them faster, so that the first stream is still open when the last one opens, however
   * late the openings fall behind their schedule.
   */
  rampSeconds?: number;
}

/** How the streams were split between the fake upstream's sockets and the built-in mock provider. */
export interface SoakSplit {
  /** The per-process open-file limit (`ulimit -n`), from /proc/self/limits; undefined where unknown. */
  fdLimit: number | undefined;
  upstream: number;
  mock: number;
}

export interface SoakSample {
  /** Seconds since the first stream was opened. */
  t: number;
  open: number;
  rssBytes: number;
}

export interface SoakResult {
  streams: number;
  split: SoakSplit;
  /** What the gateway process ran: compiled dist/ or the TypeScript sources (bin/sluice.js decides), and its Node options. */
  gatewayRuns: string;
  heartbeatSeconds: number;
  rampSeconds: number;
  streamSeconds: number;
  idleRssBytes: number;
  peakRssBytes: number;
  /** The most streams open at one time (headers received, not yet ended). */
  peakOpen: number;
  /** Median RSS while every stream was open, minus the idle RSS, over the streams. */
  rssPerStreamBytes: number | undefined;
  samples: SoakSample[];
  completed: number;
  errors: number;
  errorSamples: string[];
  /** Content frames and heartbeats the client read, over all streams. */
  frames: number;
  heartbeats: number;
  gatewayCpuSeconds: number;
  loadGenCpuSeconds: number;
  /** CPU that other programs used meanwhile, in cores: on a busy machine the gateway falls behind. */
  otherCores: number | undefined;
  /** The load generator's event-loop delay: a starved load generator would show here. */
  loadGenDelayMs: { p99: number; max: number };
  limitBytes: number;
  pass: boolean;
}

/** 1 GiB: issue 15's bound for the gateway holding 10,000 streams. */
export const SOAK_LIMIT_BYTES = 1024 ** 3;

/** The gateway's descriptors other than its streams' sockets: the listener, the ledger, pipes, epoll. */
const RESERVED_FDS = 1_000;

const HEARTBEAT_S = 15;

/** `Max open files` (the soft limit) of this process; its children inherit it. */
export function openFileLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    return soft && /^\d+$/.test(soft) ? Number(soft) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A stream through the fake upstream costs the gateway two descriptors (the client's socket and
 * its upstream socket), one through the mock provider only the client's. So as many go upstream
 * as fit under the limit, and the rest to the mock (sluice's HTTP/1.1 upstream client opens one
 * socket per concurrent stream).
 */
export function splitStreams(streams: number, fdLimit: number | undefined): SoakSplit {
  const room = fdLimit === undefined ? streams : fdLimit - RESERVED_FDS - streams;
  if (room < 0) throw new Error(`${streams} streams need more than the open-file limit of ${fdLimit} in one process`);
  const upstream = Math.min(streams, room);
  return { fdLimit, upstream, mock: streams - upstream };
}

/** What bin/sluice.js will run: dist/ when it is current, else the sources. */
function gatewayRuns(): string {
  if (!existsSync(join(root, 'dist/cli/main.js'))) return 'TypeScript sources (no dist/: `npm run build`)';
  return distIsCurrent() ? 'compiled dist/' : 'TypeScript sources (dist/ is older than src/: `npm run build`)';
}

interface StreamTally {
  open: number;
  peakOpen: number;
  completed: number;
  errors: number;
  errorSamples: string[];
  frames: number;
  heartbeats: number;
  log: (line: string) => void;
}

/** One slow stream, read to its end: it must be a 200 that ends with `[DONE]` and carries no error frame. */
async function oneStream(agent: Agent, origin: string, body: string, tally: StreamTally): Promise<void> {
  let opened = false;
  try {
    const res = await agent.request({
      origin,
      path: '/v1/chat/completions',
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-soak-master' },
      body,
    });
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${(await res.body.text()).slice(0, 200)}`);
    opened = true;
    tally.open++;
    tally.peakOpen = Math.max(tally.peakOpen, tally.open);
    let tail = '';
    res.body.setEncoding('utf8');
    for await (const piece of res.body as AsyncIterable<string>) {
      const text = tail + piece;
      tally.frames += count(piece, 'data: {');
      tally.heartbeats += count(piece, ': heartbeat');
      if (piece.includes('"error"')) throw new Error(`error frame: ${piece.slice(0, 200)}`);
      tail = text.slice(-64);
    }
    if (!tail.endsWith('data: [DONE]\n\n')) throw new Error(`the stream ended without [DONE]: ...${JSON.stringify(tail)}`);
    tally.completed++;
  } catch (err) {
    tally.errors++;
    if (tally.errorSamples.length < 5) {
      tally.errorSamples.push((err as Error).message);
      tally.log(`soak: error: ${(err as Error).message}`);
    }
  } finally {
    if (opened) tally.open--;
  }
}

function count(text: string, needle: string): number {
  let n = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) n++;
  return n;
}

const chat = (model: string, content: string) =>
  JSON.stringify({ model, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content }] });

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const { streams, seconds, log } = options;
  const split = splitStreams(streams, options.fdLimit ?? openFileLimit());
  // Streams open over the first 40% of the run (10,000 in 72 s: a new stream costs the gateway
  // ~1-3 ms of CPU on a busy 2-core VM, and 370 a second there led to timeouts) and each lasts
  // until ~90% of it, so that all are open together in between.
  const rampSeconds = options.rampSeconds ?? Math.max(1, Math.round(seconds * 0.4));
  const streamSeconds = Math.max(2, Math.round(seconds * 0.9) - rampSeconds);
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'sluice-soak-'));
  const upstream = await startChild<{ type: 'ready'; port: number }>('./upstream-process.ts', {});
  let gateway: ChildProcess | undefined;
  try {
    const configFile = join(dir, 'sluice.yaml');
    writeFileSync(
      configFile,
      JSON.stringify({
        server: { host: '127.0.0.1', port: 0, max_connections: streams + 100, max_connections_per_client: streams + 100 },
        auth: { master_key: 'sk-soak-master' },
        store: { path: join(dir, 'sluice.db') },
        providers: { up: { base_url: `http://127.0.0.1:${upstream.ready.port}/v1`, api_key: 'sk-soak' } },
        stream: { heartbeat_s: HEARTBEAT_S, deadline_s: seconds * 2 },
      }),
    );
    const started = await startServe(configFile, options.nodeArgs ?? []);
    gateway = started.child;
    const pid = gateway.pid ?? 0;
    const origin = `http://127.0.0.1:${started.port}`;
    await new Promise((r) => setTimeout(r, 2000));
    const idleRssBytes = procStatus(pid, 'VmRSS');
    const runs = gatewayRuns() + (options.nodeArgs?.length ? `, node ${options.nodeArgs.join(' ')}` : '');
    log(
      `soak: ${streams} streams, open-file limit ${split.fdLimit ?? 'unknown'} per process: ${split.upstream} through the fake ` +
        `upstream (a socket each in the gateway), ${split.mock} through the built-in mock provider (no upstream socket)`,
    );
    log(
      `soak: gateway ${runs}, idle RSS ${mib(idleRssBytes)}; streams open over ${rampSeconds} s, each ${streamSeconds} s long ` +
        `(upstream: a token per second; mock/slow: one per 500 ms); heartbeat_s ${HEARTBEAT_S}`,
    );

    const tally: StreamTally = { open: 0, peakOpen: 0, completed: 0, errors: 0, errorSamples: [], frames: 0, heartbeats: 0, log };
    const agent = new Agent({
      connections: streams,
      connect: { timeout: 30_000 },
      headersTimeout: 60_000,
      bodyTimeout: 60_000,
      keepAliveTimeout: 1_000,
    });
    const upstreamBody = chat(`up/bench-pace-1000-tokens-${streamSeconds}`, 'Describe a river.');
    // mock/slow echoes the prompt a word per 500 ms: twice the words for the same length.
    const mockBody = chat('mock/slow', 'tick '.repeat(Math.max(1, streamSeconds * 2 - 2)));
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const pids = [process.pid, pid, upstream.pid];
    const loadFrom = markLoad(pids);
    const cpuBefore = process.cpuUsage();
    const gatewayCpuBefore = procCpuSeconds(pid);
    const t0 = performance.now();
    const running: Promise<void>[] = [];
    // Opened in batches every 50 ms; upstream and mock streams interleaved in proportion.
    const batches = Math.max(1, Math.round((rampSeconds * 1000) / 50));
    let sent = 0;
    const opening = (async () => {
      for (let b = 1; b <= batches; b++) {
        const until = Math.round((streams * b) / batches);
        for (; sent < until; sent++) {
          const mock = Math.floor(((sent + 1) * split.mock) / streams) > Math.floor((sent * split.mock) / streams);
          running.push(oneStream(agent, origin, mock ? mockBody : upstreamBody, tally));
        }
        const due = t0 + b * 50;
        await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
      }
    })();

    const samples: SoakSample[] = [];
    let lastLog = 0;
    const sampler = setInterval(() => {
      const t = (performance.now() - t0) / 1000;
      const sample = { t, open: tally.open, rssBytes: procStatus(pid, 'VmRSS') };
      samples.push(sample);
      if (t - lastLog >= 10) {
        lastLog = t;
        log(
          `soak: ${t.toFixed(0).padStart(4)} s  open ${String(sample.open).padStart(6)}  gateway RSS ${mib(sample.rssBytes)}  errors ${tally.errors}`,
        );
      }
    }, 1000);
    // Bounded: whatever is still open a minute past the run's length is an error (aborted).
    const bound = t0 + (seconds + 60) * 1000;
    await opening;
    const hardStop = setTimeout(
      () => void agent.destroy(new Error('the soak ran past its bound')),
      Math.max(0, bound - performance.now()),
    );
    await Promise.all(running);
    clearTimeout(hardStop);
    clearInterval(sampler);
    delay.disable();
    const loadGen = process.cpuUsage(cpuBefore);
    const loadTo = markLoad(pids);
    const gatewayCpuSeconds = procCpuSeconds(pid) - gatewayCpuBefore;
    const peakRssBytes = Math.max(procStatus(pid, 'VmHWM'), ...samples.map((s) => s.rssBytes));
    await agent.close();

    const full = samples.filter((s) => s.open === streams);
    const rssPerStreamBytes = full.length > 0 ? (median(full.map((s) => s.rssBytes)) - idleRssBytes) / streams : undefined;
    const pass =
      tally.errors === 0 && tally.completed === streams && tally.peakOpen === streams && peakRssBytes < SOAK_LIMIT_BYTES;
    return {
      streams,
      split,
      gatewayRuns: runs,
      heartbeatSeconds: HEARTBEAT_S,
      rampSeconds,
      streamSeconds,
      idleRssBytes,
      peakRssBytes,
      peakOpen: tally.peakOpen,
      rssPerStreamBytes,
      samples,
      completed: tally.completed,
      errors: tally.errors,
      errorSamples: tally.errorSamples,
      frames: tally.frames,
      heartbeats: tally.heartbeats,
      gatewayCpuSeconds,
      loadGenCpuSeconds: (loadGen.user + loadGen.system) / 1e6,
      otherCores: loadFrom && loadTo ? foreignCores(loadFrom, loadTo) : undefined,
      loadGenDelayMs: { p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 },
      limitBytes: SOAK_LIMIT_BYTES,
      pass,
    };
  } finally {
    if (gateway && gateway.exitCode === null) {
      const exited = new Promise((r) => gateway?.once('exit', r));
      gateway.kill('SIGTERM');
      const timer = setTimeout(() => gateway?.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await upstream.stop();
    if (!options.dir) rmSync(dir, { recursive: true, force: true });
  }
}

export const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

/** The soak's printed report: the split, RSS over time, per stream, and PASS/FAIL against 1 GiB. */
export function formatSoak(r: SoakResult): string {
  const lines = [
    `soak: ${r.streams} concurrent slow streams through one gateway process (${r.gatewayRuns})`,
    `  open-file limit ${r.split.fdLimit ?? 'unknown'} per process: ${r.split.upstream} streams through the fake upstream ` +
      `(one upstream socket each), ${r.split.mock} through the built-in mock provider (none)`,
    `  heartbeat_s ${r.heartbeatSeconds}; streams opened over ${r.rampSeconds} s, each ${r.streamSeconds} s long`,
    `  RSS over time (s, open streams, gateway RSS):`,
  ];
  const step = Math.max(1, Math.ceil(r.samples.length / 20));
  for (let i = 0; i < r.samples.length; i += step) {
    const s = r.samples[i];
    lines.push(`    ${s.t.toFixed(0).padStart(5)}  ${String(s.open).padStart(6)}  ${mib(s.rssBytes)}`);
  }
  lines.push(
    `  gateway RSS: idle ${mib(r.idleRssBytes)}, peak ${mib(r.peakRssBytes)}; ` +
      (r.rssPerStreamBytes === undefined
        ? 'never all open at once, so no RSS per stream'
        : `per open stream ${(r.rssPerStreamBytes / 1024).toFixed(1)} KiB (median RSS with all ${r.streams} open, less idle)`),
    `  streams: ${r.completed} completed, ${r.errors} errors, at most ${r.peakOpen} open at once; ` +
      `${r.frames} data frames and ${r.heartbeats} heartbeats read`,
    ...r.errorSamples.map((e) => `    error: ${e}`),
    `  CPU: gateway ${r.gatewayCpuSeconds.toFixed(1)} s, load generator ${r.loadGenCpuSeconds.toFixed(1)} s ` +
      `(event-loop delay p99 ${r.loadGenDelayMs.p99.toFixed(0)} ms, max ${r.loadGenDelayMs.max.toFixed(0)} ms); ` +
      `other processes ${r.otherCores === undefined ? 'unknown' : `${r.otherCores.toFixed(2)} cores`}`,
    `  ${r.pass ? 'PASS' : 'FAIL'}: ${r.streams} streams held, 0 errors, peak RSS < ${mib(r.limitBytes)} ` +
      `(peak ${mib(r.peakRssBytes)}, errors ${r.errors}, at most ${r.peakOpen} open)`,
  );
  return lines.join('\n');
}
