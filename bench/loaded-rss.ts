/**
 * The memory under load: RSS of `sluice serve --workers 1` as a user runs it (bin/sluice.js
 * on a config file: the compiled dist/ when it is current, one gateway, the embedded SQLite ledger
 * in a temporary folder) while `streams` paced streams are open through it, sampled every 100 ms.
 * Not the bench's own gateway process, which runs the TypeScript sources and three gateways at
 * once (~200 MiB before its first request), so its peak says more about the bench than about sluice.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { startChild } from './children.ts';
import { distIsCurrent, procCpuSeconds, procStatus, startServe } from './gateway-build.ts';
import { runPhase, type Target } from './load.ts';

export interface LoadedRss {
  streams: number;
  paceMs: number;
  /** RSS once listening, before the load, MiB. */
  startMiB: number;
  /** The highest RSS sampled while the load ran, MiB. */
  peakMiB: number;
  requests: number;
  errors: number;
  /** The gateway's CPU over the load (user + system, its threads included) per request, ms. */
  cpuMsPerRequest: number;
  /** What bin/sluice.js ran, when it was not the compiled dist/. */
  stale?: string;
}

export interface LoadedRssOptions {
  streams: number;
  paceMs: number;
  seconds: number;
  /** The request through the gateway at `origin` (the bench's paced chat stream, with the master key). */
  target: (origin: string) => Target;
  masterKey: string;
  /** The cores the gateway and the fake upstream are pinned to, as in the bench's phases (undefined: not pinned). */
  core?: number;
  upstreamCore?: number;
}

export async function loadedRss(options: LoadedRssOptions): Promise<LoadedRss> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-loaded-'));
  const upstream = await startChild<{ type: 'ready'; port: number }>('./upstream-process.ts', { core: options.upstreamCore });
  let gateway: ChildProcess | undefined;
  const agent = new Agent({ connections: options.streams * 2, keepAliveTimeout: 60_000 });
  try {
    const configFile = join(dir, 'sluice.yaml');
    writeFileSync(
      configFile,
      JSON.stringify({
        // Every connection of the load is one client's (127.0.0.1): no per-client cap below the global one.
        server: { host: '127.0.0.1', port: 0, max_connections_per_client: 10_000 },
        auth: { master_key: options.masterKey },
        store: { path: join(dir, 'sluice.db') },
        providers: { up: { base_url: `http://127.0.0.1:${upstream.ready.port}/v1`, api_key: 'sk-bench' } },
      }),
    );
    const started = await startServe(configFile, [], options.core);
    gateway = started.child;
    const pid = gateway.pid ?? 0;
    const startMiB = procStatus(pid, 'VmRSS') / MIB;
    let peakMiB = startMiB;
    const cpuBefore = procCpuSeconds(pid);
    const sample = () => {
      try {
        peakMiB = Math.max(peakMiB, procStatus(pid, 'VmRSS') / MIB);
      } catch {
        // A gateway gone mid-load has no /proc entry: its requests fail, and the run says so.
      }
    };
    const sampler = setInterval(sample, 100);
    try {
      const phase = await runPhase(options.target(`http://127.0.0.1:${started.port}`), {
        dispatcher: agent,
        concurrency: options.streams,
        durationMs: options.seconds * 1000,
        staggerMs: options.paceMs,
        validateEvery: 50,
      });
      sample();
      const cpuMsPerRequest = ((procCpuSeconds(pid) - cpuBefore) * 1000) / Math.max(1, phase.timings.length);
      const stale = distIsCurrent() ? undefined : 'dist/ is older than src/ (or missing): `npm run build`';
      return {
        streams: options.streams,
        paceMs: options.paceMs,
        startMiB,
        peakMiB,
        requests: phase.timings.length,
        errors: phase.errors,
        cpuMsPerRequest,
        stale,
      };
    } finally {
      clearInterval(sampler);
    }
  } finally {
    gateway?.kill('SIGKILL');
    await agent.close();
    await upstream.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const MIB = 1024 * 1024;
