import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, type IncomingMessage, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { LedgerRecord } from '../../src/accounting/ledger-record.ts';
import { ledgerRows } from '../e2e/faults-matrix-support.ts';
import { recordedFrames } from '../e2e/faults-support.ts';
import { prng, type RecordedRequest, startFakeUpstream, type UpstreamReply } from '../helpers/fake-upstream.ts';
import { startGateway } from '../helpers/gateway.ts';

/**
 * The soak: mixed streaming traffic through an in-process gateway against a fake upstream, with
 * client disconnects and upstream faults drawn from a seeded PRNG, then the checks that only a long
 * run can make: every request left exactly one ledger row, no request scope is left, and memory and
 * open handles came back to where they were after the warm-up.
 */
export const KINDS = ['completed', 'client-gone', 'reset', 'malformed', 'idle', 'overloaded'] as const;
export type Kind = (typeof KINDS)[number];
/** Mostly streams that complete, as in production; every fault often enough to count. */
const WEIGHTS: Record<Kind, number> = { completed: 10, 'client-gone': 3, reset: 2, malformed: 2, idle: 1, overloaded: 2 };

/**
 * The outcome each kind must leave in the ledger (an error with some code: the exact codes are
 * pinned by test/e2e/faults-matrix.test.ts and faults-mixed-load.test.ts, not repeated here).
 */
export const EXPECTED: Record<Kind, LedgerRecord['outcome']> = {
  completed: 'ok',
  'client-gone': 'cancelled',
  reset: 'error',
  malformed: 'error',
  idle: 'error',
  overloaded: 'error',
};

export interface SoakOptions {
  seconds: number;
  seed: number;
  concurrency: number;
  /** Progress lines (the CLI prints them; the test stays quiet). */
  log?: (line: string) => void;
}

interface Snapshot {
  rssBytes: number;
  heapUsedBytes: number;
  /** process.getActiveResourcesInfo(), counted by type. */
  resources: Record<string, number>;
}

export interface SoakResult {
  seed: number;
  concurrency: number;
  seconds: number;
  requests: number;
  byKind: Record<string, number>;
  requestsPerSecond: number;
  ledgerRows: number;
  /** Requests whose X-Request-ID has no row, rows with a wrong outcome, rows for no request. */
  missingRows: number;
  wrongRows: string[];
  scopesLeft: number;
  /** After the warm-up, after the first half, after the second half: each with no traffic and after a full GC. */
  warm: Snapshot;
  mid: Snapshot;
  after: Snapshot;
  /** Why the run failed (empty: it held). */
  failures: string[];
}

/**
 * Allowed growth over the second half of the soak (its start is the baseline: by then the process
 * has grown to its working size under this load), both after a full GC. Heap: 8 MiB, or 10%: V8
 * keeps code and inline caches and a few tables sized for the peak; a leak of 600 bytes a request
 * shows past it within the ~15,000 requests of a 5-minute run's second half. RSS: 48 MiB, or 25%:
 * freed pages go back to the OS late (V8 spaces, glibc arenas, the worker threads that count
 * tokens, the SQLite page cache), so RSS only catches a gross leak; the heap is the precise one.
 * Open handles must come back to what they were after the warm-up (one timer either way).
 */
const HEAP_SLACK = { bytes: 8 * 1024 * 1024, ratio: 0.1 };
const RSS_SLACK = { bytes: 48 * 1024 * 1024, ratio: 0.25 };

function gcFunction(): () => void {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing) return existing;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

function countResources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const log = options.log ?? (() => {});
  const gc = gcFunction();
  const random = prng(options.seed);
  const frames = recordedFrames();
  const head = frames.slice(0, 3);
  const totalWeight = KINDS.reduce((n, k) => n + WEIGHTS[k], 0);
  const drawKind = (): Kind => {
    let r = random() * totalWeight;
    for (const k of KINDS) if ((r -= WEIGHTS[k]) < 0) return k;
    return 'completed';
  };

  const replyFor = (req: RecordedRequest): UpstreamReply => {
    const kind = (req.json as { messages: { content: string }[] }).messages[0].content.split(' ')[0] as Kind;
    switch (kind) {
      case 'completed':
        return { pieces: frames, delayMs: 2 };
      case 'client-gone':
        return { pieces: head, delayMs: 2, after: 'hang' };
      case 'reset':
        return { pieces: head, delayMs: 2, after: 'reset' };
      case 'malformed':
        return { pieces: [...head, 'data: {"choices":[{"delta":\n\n'], delayMs: 2, after: 'hang' };
      case 'idle':
        return { pieces: head, after: 'hang' };
      case 'overloaded':
        return { status: 503, headers: { 'content-type': 'application/json' }, body: '{"error":{"message":"overloaded","type":"server_error"}}' };
    }
  };

  const dir = mkdtempSync(join(tmpdir(), 'sluice-soak-'));
  const upstream = await startFakeUpstream();
  upstream.reply(replyFor);
  const gw = await startGateway({
    providers: { up: { base_url: `${upstream.url}/v1`, api_key: 'sk-upstream' } },
    // 2 s: short enough for the idle kind to end soon, long enough that a machine too busy to run
    // this process for a moment does not turn a healthy stream into an idle timeout.
    stream: { heartbeat_s: 0, idle_timeout_s: 2, deadline_s: 10 },
    ledger: { flush_interval_ms: 50 },
    // A file: an in-memory ledger would grow the RSS being measured with every row.
    store: { path: join(dir, 'sluice.db') },
  });
  // No keep-alive on the client side: a socket per request, so none is left open between phases.
  const agent = new Agent({ keepAlive: false, maxSockets: options.concurrency * 2 });

  const seen: { kind: Kind; requestId: string | undefined }[] = [];
  const byKind: Record<string, number> = {};

  /**
   * One request of a kind. The client of `client-gone` hangs up at its response's headers (which
   * leave with the first token) or at its first read: both before the stream could end, and both
   * with the X-Request-ID known (a hang-up before the gateway read the request leaves no request
   * to count; fault-matrix covers the hang-up before the first token).
   */
  const oneRequest = (kind: Kind, n: number) =>
    new Promise<void>((resolve) => {
      const hangUpAfter = kind === 'client-gone' ? Math.floor(random() * 2) : Number.POSITIVE_INFINITY;
      const body = JSON.stringify({ model: 'up/m', messages: [{ role: 'user', content: `${kind} ${n}` }], stream: true });
      const req = request(`${gw.url}/v1/chat/completions`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } });
      let requestId: string | undefined;
      let settled = false;
      const settle = () => {
        if (settled) return;
        settled = true;
        seen.push({ kind, requestId });
        byKind[kind] = (byKind[kind] ?? 0) + 1;
        resolve();
      };
      req.on('response', (res: IncomingMessage) => {
        requestId = res.headers['x-request-id'] as string | undefined;
        if (hangUpAfter === 0) req.destroy();
        res.on('data', () => {
          if (hangUpAfter === 1) req.destroy();
        });
        res.on('end', settle);
        res.on('close', settle);
      });
      req.on('error', settle);
      req.on('close', settle);
      req.end(body);
    });

  let running = true;
  let n = 0;
  const traffic = async (seconds: number) => {
    running = true;
    const until = Date.now() + seconds * 1000;
    const worker = async () => {
      while (running && Date.now() < until) await oneRequest(drawKind(), n++);
    };
    await Promise.all(Array.from({ length: options.concurrency }, worker));
  };

  /**
   * No traffic, every scope released, every socket closed (the fake upstream drops idle keep-alive
   * after 5 s), the fake upstream's log of requests emptied (it is this process's memory too), a full GC.
   */
  const quiesce = async (): Promise<Snapshot> => {
    upstream.requests.splice(0);
    for (let i = 0; i < 500 && gw.gateway.context.scopes.size > 0; i++) await sleep(20);
    for (let i = 0; i < 400 && (countResources().TCPSocketWrap ?? 0) > 0; i++) await sleep(25);
    for (let i = 0; i < 3; i++) {
      gc();
      await sleep(50);
    }
    const memory = process.memoryUsage();
    return { rssBytes: memory.rss, heapUsedBytes: memory.heapUsed, resources: countResources() };
  };

  const warmSeconds = Math.min(30, Math.max(2, options.seconds * 0.1));
  log(`soak: seed ${options.seed}, ${options.concurrency} clients, warm-up ${warmSeconds.toFixed(0)} s, then ${options.seconds} s`);
  await traffic(warmSeconds);
  const warm = await quiesce();
  const warmRequests = seen.length;
  log(`warm: ${warmRequests} requests, RSS ${mib(warm.rssBytes)}, heap ${mib(warm.heapUsedBytes)}`);

  const started = Date.now();
  const half = options.seconds / 2;
  const progress = setInterval(() => {
    gc();
    const m = process.memoryUsage();
    log(`  ${((Date.now() - started) / 1000).toFixed(0)} s: ${seen.length - warmRequests} requests, RSS ${mib(m.rss)}, heap ${mib(m.heapUsed)}`);
  }, 30_000);
  await traffic(half);
  const pausedAt = Date.now();
  const mid = await quiesce();
  log(`half-way: ${seen.length - warmRequests} requests, RSS ${mib(mid.rssBytes)}, heap ${mib(mid.heapUsedBytes)}`);
  const pause = Date.now() - pausedAt;
  await traffic(half);
  clearInterval(progress);
  // Seconds of traffic, the half-way pause left out.
  const elapsed = (Date.now() - started - pause) / 1000;
  const after = await quiesce();

  // Every request, warm-up included, has its row: the store holds exactly as many rows as requests were made.
  const failures: string[] = [];
  let rows: LedgerRecord[] = [];
  for (let i = 0; i < 200; i++) {
    rows = await ledgerRows(gw.gateway);
    if (rows.length >= seen.length) break;
    await sleep(25);
  }
  const byId = new Map(rows.map((r) => [r.requestId, r]));
  let missingRows = 0;
  const wrongRows: string[] = [];
  for (const s of seen) {
    if (!s.requestId) continue; // hung up before the headers: counted in the total below
    const row = byId.get(s.requestId);
    if (!row) {
      missingRows++;
      continue;
    }
    const ok = row.outcome === EXPECTED[s.kind] && (row.outcome === 'ok') === (row.errorCode === null);
    if (!ok) wrongRows.push(`${s.kind} ${s.requestId}: ${row.outcome} ${row.errorCode}`);
  }
  if (rows.length !== seen.length) failures.push(`${rows.length} ledger rows for ${seen.length} requests`);
  if (missingRows > 0) failures.push(`${missingRows} requests have no ledger row`);
  if (wrongRows.length > 0) failures.push(`${wrongRows.length} rows with the wrong outcome: ${wrongRows.slice(0, 5).join('; ')}`);
  const scopesLeft = gw.gateway.context.scopes.size;
  if (scopesLeft !== 0) failures.push(`${scopesLeft} request scopes left`);
  const heapLimit = mid.heapUsedBytes + Math.max(HEAP_SLACK.bytes, mid.heapUsedBytes * HEAP_SLACK.ratio);
  if (after.heapUsedBytes > heapLimit) {
    failures.push(`heap ${mib(after.heapUsedBytes)} after, ${mib(mid.heapUsedBytes)} half-way (limit ${mib(heapLimit)})`);
  }
  const rssLimit = mid.rssBytes + Math.max(RSS_SLACK.bytes, mid.rssBytes * RSS_SLACK.ratio);
  if (after.rssBytes > rssLimit) failures.push(`RSS ${mib(after.rssBytes)} after, ${mib(mid.rssBytes)} half-way (limit ${mib(rssLimit)})`);
  for (const type of new Set([...Object.keys(warm.resources), ...Object.keys(after.resources)])) {
    // Timers come and go with the ledger's flush and the fake upstream's keep-alive checks: one either way.
    const slack = type === 'Timeout' ? 1 : 0;
    if ((after.resources[type] ?? 0) > (warm.resources[type] ?? 0) + slack) {
      failures.push(`${type}: ${after.resources[type]} open after, ${warm.resources[type] ?? 0} warm`);
    }
  }

  agent.destroy();
  await gw.close();
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });

  return {
    seed: options.seed,
    concurrency: options.concurrency,
    seconds: Math.round(elapsed),
    requests: seen.length,
    byKind,
    requestsPerSecond: Math.round((seen.length - warmRequests) / elapsed),
    ledgerRows: rows.length,
    missingRows,
    wrongRows,
    scopesLeft,
    warm,
    mid,
    after,
    failures,
  };
}

export function mib(bytes: number): string {
  return `${(bytes / 1048576).toFixed(1)} MiB`;
}
