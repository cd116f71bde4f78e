import type { RedisClientType } from '@redis/client';

export type Redis = RedisClientType;

/** Redis did not answer in time, refused, or is not connected: the tier's `redis_unavailable` decides. */
export class RedisUnavailable extends Error {
  constructor(why: string) {
    super(`Redis is unavailable: ${why}`);
    this.name = 'RedisUnavailable';
  }
}

export interface RedisLinkOptions {
  url: string;
  /** An answer slower than this is no answer (limits.redis_timeout_ms). */
  timeoutMs: number;
  log: (message: string) => void;
  /** Reconnect delays: doubling from firstMs up to maxMs. */
  retry?: { firstMs: number; maxMs: number };
}

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
 * background, with backoff, while requests get the tier's redis_unavailable policy at once.
 */
export class RedisLink {
  private readonly options: RedisLinkOptions;
  private current: Redis | undefined;
  private connecting: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private attempts = 0;
  private closed = false;
  private wasDown = false;
  /** Bumped per connection: what was built on an older client (limiters) is rebuilt. */
  generation = 0;

  constructor(options: RedisLinkOptions) {
    this.options = options;
  }

  /** The first connection, awaited at start-up for at most a few timeouts (then retried in the background). */
  async start(): Promise<void> {
    await this.connect();
  }

  /** The connected client, or undefined while down. */
  get client(): Redis | undefined {
    return this.current?.isReady ? this.current : undefined;
  }

  /** `work` against the client within the timeout; RedisUnavailable when down, failing or slow. */
  async run<T>(work: (client: Redis) => Promise<T>): Promise<T> {
    const client = this.client;
    if (!client) {
      this.ensureReconnecting();
      throw new RedisUnavailable('not connected');
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      // Decided after the I/O phase: when the event loop itself was held up past the timeout,
      // Redis's answer is waiting in the socket and must win over the timer that fired first.
      const expire = () => setImmediate(() => reject(new RedisUnavailable(`no answer within ${this.options.timeoutMs} ms`)));
      timer = setTimeout(expire, this.options.timeoutMs);
    });
    try {
      return await Promise.race([work(client), timeout]);
    } catch (err) {
      if (err instanceof RedisUnavailable) this.drop(client, err.message);
      else if (isConnectionError(err)) this.drop(client, (err as Error).message);
      throw err instanceof RedisUnavailable ? err : new RedisUnavailable((err as Error).message);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Fire and forget (releases, reconciliations): a failure is logged, never thrown. */
  send(what: string, work: (client: Redis) => Promise<unknown>): void {
    this.run(work).catch((err: Error) => this.options.log(`limits: could not ${what}: ${err.message}`));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const client = this.current;
    this.current = undefined;
    if (client?.isOpen) await Promise.race([client.close().catch(() => {}), new Promise((r) => setTimeout(r, 1_000))]);
    if (client?.isOpen) client.destroy();
  }

  private connect(): Promise<void> {
    this.connecting ??= this.open().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async open(): Promise<void> {
    const { url, timeoutMs, log } = this.options;
    // Imported here, not at the top: node-redis costs ~5 MiB of RSS, for nothing in a gateway
    // without Redis (an idle gateway, compiled: 133 -> 128 MiB).
    const { createClient } = await import('@redis/client');
    const client: Redis = createClient({
      url,
      disableOfflineQueue: true,
      // Reconnects are ours (below): one policy for a reset and for a silent connection.
      socket: { connectTimeout: Math.max(timeoutMs * 4, 1_000), reconnectStrategy: false },
    });
    client.on('error', () => {}); // every failure surfaces through a command or `end`
    client.on('end', () => {
      if (this.current === client) this.drop(client, 'connection closed');
    });
    try {
      await withTimeout(client.connect(), Math.max(timeoutMs * 8, 2_000));
    } catch (err) {
      client.destroy();
      this.scheduleReconnect(`cannot connect: ${(err as Error).message}`);
      return;
    }
    if (this.closed) {
      client.destroy();
      return;
    }
    this.current = client;
    this.generation++;
    this.attempts = 0;
    if (this.wasDown) log('limits: Redis is reachable again; limits are shared again');
    this.wasDown = false;
  }

  /** A connection node-redis gave up on (reset, refused) is replaced; one being replaced is left alone. */
  private ensureReconnecting(): void {
    const current = this.current;
    if (current) this.drop(current, 'connection lost');
    else if (!this.connecting && !this.retryTimer && !this.closed) this.scheduleReconnect('not connected');
  }

  private drop(client: Redis, why: string): void {
    if (this.current !== client) return;
    this.current = undefined;
    if (client.isOpen) client.destroy();
    this.scheduleReconnect(why);
  }

  private scheduleReconnect(why: string): void {
    if (this.closed || this.retryTimer) return;
    const retry = this.options.retry ?? { firstMs: 200, maxMs: 5_000 };
    const delay = Math.min(retry.firstMs * 2 ** this.attempts, retry.maxMs);
    if (!this.wasDown)
      this.options.log(`limits: Redis is unavailable (${why}); each tier's redis_unavailable applies; reconnecting`);
    this.wasDown = true;
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

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
