import type { RedisClientType } from '@redis/client';

export type Redis = RedisClientType;

/** Redis did not answer in time, refused, or is not connected: the tier's `redis_unavailable` decides. */
export class RedisUnavailable extends Error {
  constructor(why: string) {
    super(`Redis is unavailable: ${why}`);
    this.name = 'RedisUnavailable';
  }
}

/** Why the link went down: an answer slower than the timeout, or a connection lost, refused or never made. */
export type RedisDownReason = 'timeout' | 'connection';

export interface RedisLinkOptions {
  url: string;
  /** An answer slower than this is no answer (limits.redis_timeout_ms). */
  timeoutMs: number;
  log: (message: string) => void;
  /** Reconnect delays: doubling from firstMs up to maxMs. */
  retry?: { firstMs: number; maxMs: number };
  /** What the owner does while Redis is away and once it is back, said in the log lines. */
  meaning?: { down: string; up: string };
  /** Redis stopped answering, or the first connection failed (called once per outage). */
  onDown?: (reason: RedisDownReason) => void;
  /** Redis answers again after an outage (the work owed to it was sent first). */
  onUp?: () => void;
}

/**
 * Between two connection attempts while Redis is away: short, because a fail_closed tier refuses
 * every request until one succeeds (issue 25: it took 2-3 s with delays of up to 5 s); an
 * attempt is a TCP connect and a PING, nothing a Redis that is down would notice.
 */
const RETRY = { firstMs: 100, maxMs: 250 };
/** Releases owed to Redis while it was away, sent when it is back; past this many the oldest are dropped (they expire there anyway). */
const MAX_OWED = 10_000;

/**
 * The one Redis connection of an instance, for the shared limits and reservations. node-redis
 * pipelines the commands issued in one tick into one write, so an admission's few commands cost
 * one round trip. Commands are never queued while disconnected (`disableOfflineQueue`): a request
 * must not wait for Redis to come back.
 *
 * The watchdog is hand-written because node-redis only times out commands not yet written: on a
 * connection that went silent (a half-open TCP flow, a stalled proxy), a written command waits
 * forever and so would every request behind it. Here an answer slower than `timeoutMs` marks the
 * connection dead: it is destroyed (failing what waits on it) and a fresh one is opened in the
 * background, while requests get the tier's redis_unavailable policy at once. A new connection
 * is used only once it has answered a PING within the timeout: a Redis that answers, but slowly,
 * would otherwise cost every request a timeout in turn.
 */
export class RedisLink {
  private readonly options: RedisLinkOptions;
  private current: Redis | undefined;
  private connecting: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private attempts = 0;
  private closed = false;
  /** Since when Redis has been away (undefined while it answers). */
  private downSince: number | undefined;
  /** Work owed to Redis that failed while it was away (releases), sent first on the next connection. */
  private readonly owed: ((client: Redis) => Promise<unknown>)[] = [];
  /** Bumped per connection: what was built on an older client (limiters) is rebuilt. */
  generation = 0;

  constructor(options: RedisLinkOptions) {
    this.options = options;
  }

  /** The first connection, awaited at start-up for a bounded time (then retried in the background). */
  async start(): Promise<void> {
    await this.connect();
  }

  /** The connected client, or undefined while down. */
  get client(): Redis | undefined {
    return this.current?.isReady ? this.current : undefined;
  }

  /** Whether Redis answers now; when it does not, a reconnect is made sure to be under way. */
  available(): boolean {
    if (this.client) return true;
    this.ensureReconnecting();
    return false;
  }

  /** `work` against the client within the timeout; RedisUnavailable when down, failing or slow. */
  async run<T>(work: (client: Redis) => Promise<T>): Promise<T> {
    const client = this.client;
    if (!client) {
      this.ensureReconnecting();
      throw new RedisUnavailable('not connected');
    }
    let timer: NodeJS.Timeout | undefined;
    let arming: NodeJS.Immediate | undefined;
    const answer = work(client);
    const timeout = new Promise<never>((_, reject) => {
      // Decided after the I/O phase: when the event loop itself was held up past the timeout,
      // Redis's answer is waiting in the socket and must win over the timer that fired first.
      const expire = () => setImmediate(() => reject(new RedisUnavailable(`no answer within ${this.options.timeoutMs} ms`)));
      // Started once the commands are written, not when they are issued: node-redis writes what
      // a tick issued in an immediate, queued before this one. Under a burst the event loop may
      // take a hundred ms and more to get there (the other requests' callbacks of the same
      // phase), and that wait is this process's, not Redis's (issue 25: a healthy Redis timed out).
      arming = setImmediate(() => (timer = setTimeout(expire, this.options.timeoutMs)));
    });
    try {
      return await Promise.race([answer, timeout]);
    } catch (err) {
      if (err instanceof RedisUnavailable) this.drop(client, `no answer within ${this.options.timeoutMs} ms`, 'timeout');
      else if (isConnectionError(err)) this.drop(client, (err as Error).message, 'connection');
      throw err instanceof RedisUnavailable ? err : new RedisUnavailable((err as Error).message);
    } finally {
      clearImmediate(arming);
      clearTimeout(timer);
    }
  }

  /**
   * Fire and forget (releases, reconciliations): a failure is logged, never thrown. `owed`, if
   * given, is what must still reach Redis when it is back (a slot or reservation to release,
   * which would otherwise hold until it expires).
   */
  send(what: string, work: (client: Redis) => Promise<unknown>, owed?: (client: Redis) => Promise<unknown>): void {
    this.run(work).catch((err: Error) => {
      // An outage is logged once, not with each send it fails.
      if (this.client) this.options.log(`could not ${what}: ${err.message}`);
      if (owed) this.owe(owed);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const client = this.current;
    this.current = undefined;
    if (client?.isOpen) await Promise.race([client.close().catch(() => {}), new Promise((r) => setTimeout(r, 1_000))]);
    if (client?.isOpen) client.destroy();
  }

  private owe(work: (client: Redis) => Promise<unknown>): void {
    if (this.owed.length >= MAX_OWED) this.owed.shift();
    this.owed.push(work);
  }

  private connect(): Promise<void> {
    this.connecting ??= this.open().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async open(): Promise<void> {
    const { url, timeoutMs } = this.options;
    // Bounded so that a connect into a network that drops packets ends in time for the next
    // attempt: Redis back must mean requests admitted again within about a second.
    const connectMs = Math.max(2 * timeoutMs, 500);
    // Imported here, not at the top: node-redis costs ~5 MiB of RSS, for nothing in a gateway
    // without Redis (an idle gateway, compiled: 133 -> 128 MiB).
    const { createClient } = await import('@redis/client');
    const client: Redis = createClient({
      url,
      disableOfflineQueue: true,
      // Reconnects are ours (below): one policy for a reset and for a silent connection.
      socket: { connectTimeout: connectMs, reconnectStrategy: false },
    });
    client.on('error', () => {}); // every failure surfaces through a command or `end`
    client.on('end', () => {
      if (this.current === client) this.drop(client, 'connection closed', 'connection');
    });
    try {
      await withTimeout(client.connect(), connectMs, 'connection');
      await withTimeout(client.ping(), timeoutMs, 'timeout');
    } catch (err) {
      client.destroy();
      const reason = (err as { reason?: RedisDownReason }).reason ?? 'connection';
      this.scheduleReconnect(`cannot connect: ${(err as Error).message}`, reason);
      return;
    }
    if (this.closed) {
      client.destroy();
      return;
    }
    // Written before any admission's command on this connection, so Redis runs them first.
    for (const work of this.owed.splice(0)) work(client).catch(() => {});
    this.current = client;
    this.generation++;
    this.attempts = 0;
    if (this.downSince !== undefined) {
      const away = ((Date.now() - this.downSince) / 1000).toFixed(1);
      this.downSince = undefined;
      this.options.log(`Redis answers again (away ${away} s)${this.meaning('up')}`);
      this.options.onUp?.();
    }
  }

  private meaning(which: 'down' | 'up'): string {
    const meaning = this.options.meaning?.[which];
    return meaning ? `: ${meaning}` : '';
  }

  /** A connection node-redis gave up on (reset, refused) is replaced; one being replaced is left alone. */
  private ensureReconnecting(): void {
    const current = this.current;
    if (current) this.drop(current, 'connection lost', 'connection');
    else if (!this.connecting && !this.retryTimer && !this.closed) this.scheduleReconnect('not connected', 'connection');
  }

  private drop(client: Redis, why: string, reason: RedisDownReason): void {
    if (this.current !== client) return;
    this.current = undefined;
    if (client.isOpen) client.destroy();
    this.scheduleReconnect(why, reason);
  }

  private scheduleReconnect(why: string, reason: RedisDownReason): void {
    if (this.closed || this.retryTimer) return;
    const retry = this.options.retry ?? RETRY;
    const delay = Math.min(retry.firstMs * 2 ** this.attempts, retry.maxMs);
    if (this.downSince === undefined) {
      this.downSince = Date.now();
      this.options.log(`Redis is unavailable (${why})${this.meaning('down')}; reconnecting`);
      this.options.onDown?.(reason);
    }
    this.attempts++;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, delay);
    this.retryTimer.unref();
  }
}

function isConnectionError(err: unknown): boolean {
  const name = (err as Error | undefined)?.name ?? '';
  const message = (err as Error | undefined)?.message ?? '';
  return (
    /ClientClosed|Disconnects|SocketClosed|ConnectionTimeout|ClientOffline/i.test(name) ||
    /closed|offline|ECONN|EPIPE/i.test(message)
  );
}

/** `work` within `ms`, else an error carrying why the link is down. */
async function withTimeout<T>(work: Promise<T>, ms: number, reason: RedisDownReason): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${ms} ms`), { reason })), ms)),
      ),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
