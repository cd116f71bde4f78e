import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import type { FakeUpstream } from '../helpers/fake-upstream.ts';
import { chatSse } from './limits-support.ts';

const sluice = fileURLToPath(new URL('../../bin/sluice.js', import.meta.url));

export interface Serving {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

/**
 * `sluice serve --workers N` in a process group of its own (so that a failed test can kill it
 * whole), on an ephemeral port; resolves once it announces the port.
 */
export function serve(config: string, workers: number): Promise<Serving> {
  // No DATABASE_URL: the embedded SQLite file of the config, whatever the test run has set.
  const child = spawn(process.execPath, [sluice, 'serve', '--config', config, '--workers', String(workers)], {
    env: { PATH: process.env.PATH ?? '' },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    // Each process loads the whole gateway: seconds on a quiet machine, more on a loaded one.
    const timer = setTimeout(() => reject(new Error(`not listening within 60 s:\n${out}`)), 60_000);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`sluice exited (${code}) before listening:\n${out}`));
    });
    child.stdout?.on('data', () => {
      const match = /sluice listening on (http:\/\/\S+)/.exec(out);
      if (!match) return;
      clearTimeout(timer);
      resolve({ child, url: match[1], output: () => out, exited });
    });
  });
}

/** A graceful stop (SIGTERM: the ledger is flushed), waited for. */
export async function stop(serving: Serving): Promise<void> {
  serving.child.kill('SIGTERM');
  assert.equal(await serving.exited, 0, serving.output());
}

/** Kills the whole process group, whatever is left of it (a test's cleanup). */
export function killGroup(serving: Serving | undefined): void {
  try {
    if (serving?.child.pid) process.kill(-serving.child.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** A config on `upstream` with the ledger in `dir`, priced so that the rows' costs can be checked. */
export function writeConfig(dir: string, upstream: FakeUpstream, ledger: Record<string, unknown>): string {
  const path = join(dir, 'sluice.json');
  writeFileSync(
    path,
    JSON.stringify({
      server: { port: 0, host: '127.0.0.1' },
      store: { path: join(dir, 'sluice.db') },
      providers: { up: { base_url: `${upstream.url}/v1`, api_key: 'sk-upstream' } },
      pricing: { 'up/gpt-test': { input_mtok: 1, output_mtok: 2 } },
      ledger: { flush_interval_ms: 200, ...ledger },
      log: { level: 'warn' },
    }),
  );
  return path;
}

export const SLOW_FRAMES = 30;
export const FRAME_MS = 100;

/**
 * The upstream: a request that says "quick" is answered at once; any other is a paced stream of
 * SLOW_FRAMES words, FRAME_MS apart (~3 s), so that a kill lands in the middle of it.
 */
export function pacedUpstream(upstream: FakeUpstream): void {
  upstream.reply((req) => {
    const quick = JSON.stringify(req.json).includes('quick');
    const words = quick ? ['Quick', ' answer.'] : Array.from({ length: SLOW_FRAMES }, (_, i) => ` word${i}`);
    return {
      headers: { 'content-type': 'text/event-stream' },
      pieces: chatSse(words).split(/(?<=\n\n)/),
      delayMs: quick ? 0 : FRAME_MS,
    };
  });
}

/** One client stream: its X-Request-ID once the response started, and how it ended. */
export interface ClientStream {
  id: string | undefined;
  /** Data frames read so far. */
  frames: number;
  /** Resolves when the stream ended: `[DONE]` read, or the connection lost. */
  ended: Promise<{ completed: boolean }>;
}

export function openStream(url: string, content: string): ClientStream {
  const stream: ClientStream = { id: undefined, frames: 0, ended: Promise.resolve({ completed: false }) };
  stream.ended = (async () => {
    try {
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'up/gpt-test', stream: true, messages: [{ role: 'user', content }] }),
      });
      assert.equal(res.status, 200);
      stream.id = res.headers.get('x-request-id') ?? undefined;
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        stream.frames = text.split('\n\n').length - 1;
      }
      return { completed: text.endsWith('data: [DONE]\n\n') };
    } catch {
      // The gateway (or the worker) was killed under it.
      return { completed: false };
    }
  })();
  return stream;
}

/** Waits (bounded) until `condition` holds. */
export async function until(condition: () => boolean, what: string, ms = 30_000, stepMs = 20): Promise<void> {
  for (const deadline = Date.now() + ms; !condition(); await sleep(stepMs)) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Row {
  request_id: string;
  outcome: string;
  error_code: string | null;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  usage_source: string;
}

/** The ledger rows of these requests, read from the SQLite file (WAL: while the gateway runs too). */
export function rowsOf(dir: string, ids: readonly string[]): Row[] {
  // The workers write meanwhile: a read waits out their locks as they wait out each other's.
  const db = new DatabaseSync(join(dir, 'sluice.db'), { readOnly: true, timeout: 5_000 });
  try {
    const sql =
      'SELECT request_id, outcome, error_code, input_tokens, output_tokens, cost_usd, usage_source FROM ledger ' +
      `WHERE request_id IN (${ids.map(() => '?').join(',')})`;
    return db.prepare(sql).all(...ids) as unknown as Row[];
  } finally {
    db.close();
  }
}
