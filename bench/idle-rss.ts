/**
 * The idle figure: RSS of `sluice serve --workers 1` as a user starts it after
 * `npm install` (the compiled dist/, the default config, the embedded SQLite ledger in a temporary
 * folder), read 3 s after its listening line, median of `runs` starts. Not the bench's own gateway
 * process, which runs the TypeScript sources and three gateways at once (its start RSS is printed
 * beside this one).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { distIsCurrent, procStatus, root } from './gateway-build.ts';
import { percentile } from './stats.ts';

const main = join(root, 'dist', 'cli', 'main.js');

export interface IdleRss {
  /** Median RSS 3 s after listening, MiB. */
  medianMiB: number;
  runs: number[];
  /** Why the figure may not be the current code's (dist/ older than src/), if so. */
  stale?: string;
}

export async function idleRss(runs = 3): Promise<IdleRss> {
  if (!existsSync(main)) throw new Error('dist/ is missing: run npm run build first');
  const figures: number[] = [];
  for (let i = 0; i < runs; i++) figures.push(await oneStart());
  const stale = distIsCurrent() ? undefined : 'dist/ is older than src/: npm run build';
  return {
    medianMiB: percentile(
      [...figures].sort((a, b) => a - b),
      50,
    ),
    runs: figures,
    stale,
  };
}

async function oneStart(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-idle-'));
  // The embedded default: no PostgreSQL, no Redis, whatever the bench's own environment says.
  const { DATABASE_URL: _db, REDIS_URL: _redis, SLUICE_CONFIG: _config, ...env } = process.env;
  const child = spawn(process.execPath, [main, 'serve', '--workers', '1', '--port', '0'], {
    cwd: dir,
    env,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (data: Buffer) => {
        if (data.toString().includes('sluice listening on')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`sluice serve exited (${code}) before listening`)));
    });
    await sleep(3_000);
    return procStatus(child.pid ?? 0, 'VmRSS') / (1024 * 1024);
  } finally {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}
