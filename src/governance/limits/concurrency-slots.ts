import type { Redis } from '../../store/redis-link.ts';
import { RedisScript } from './redis-script.ts';

/** One in-flight limit a request takes a slot of: its key's or its project's. */
export interface SlotClaim {
  subject: string;
  limit: number;
}

export type SlotOutcome =
  /** In use after this request took its slots, per claim. */
  | { ok: true; inUse: number[] }
  /** The first claim that was full; no slot was taken. */
  | { ok: false; refused: number; inUse: number[] };

export interface ConcurrencySlots {
  acquire(claims: readonly SlotClaim[], requestId: string, ttlMs: number): Promise<SlotOutcome> | SlotOutcome;
  release(claims: readonly SlotClaim[], requestId: string): void;
  /** The slots in use now per subject, taking none (the console's usage page). */
  inUse(subjects: readonly string[]): Promise<number[]> | number[];
}

/**
 * In-flight counters in one process. Hand-written (rate-limiter-flexible counts events per
 * window, not requests in progress): a slot is taken at admission and given back in settle, which
 * the lifecycle calls exactly once per admitted request, so no expiry is needed here.
 */
export class MemorySlots implements ConcurrencySlots {
  private readonly counts = new Map<string, number>();

  acquire(claims: readonly SlotClaim[]): SlotOutcome {
    const inUse = claims.map((c) => this.counts.get(c.subject) ?? 0);
    const refused = claims.findIndex((c, i) => inUse[i] >= c.limit);
    if (refused !== -1) return { ok: false, refused, inUse };
    for (let i = 0; i < claims.length; i++) this.counts.set(claims[i].subject, ++inUse[i]);
    return { ok: true, inUse };
  }

  /**
   * Counts slots taken elsewhere, whatever the limit: requests admitted through Redis still in
   * flight when this instance fell back to its own books (admit.ts), so that it does not grant
   * their slots a second time.
   */
  adopt(claims: readonly SlotClaim[]): void {
    for (const c of claims) this.counts.set(c.subject, (this.counts.get(c.subject) ?? 0) + 1);
  }

  release(claims: readonly SlotClaim[]): void {
    for (const c of claims) {
      const n = (this.counts.get(c.subject) ?? 1) - 1;
      if (n > 0) this.counts.set(c.subject, n);
      else this.counts.delete(c.subject);
    }
  }

  inUse(subjects: readonly string[]): number[] {
    return subjects.map((s) => this.counts.get(s) ?? 0);
  }
}

/**
 * Shared in-flight counters: one sorted set per subject, a member per request scored by when its
 * slot expires. Hand-written for the same reason as MemorySlots, and because a plain counter
 * cannot survive a crash: an instance that dies between INCR and DECR would hold its slots
 * forever. Here each slot carries its own expiry (the request's deadline plus a margin), so a
 * crashed instance's slots lapse on their own, while live ones are released at once.
 * Check-and-take is one Lua script over every claim, so two instances never both take the last slot.
 */
const ACQUIRE = new RedisScript(`
local now = tonumber(ARGV[1])
local n = #KEYS
local counts = {}
for i = 1, n do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  counts[i] = redis.call('ZCARD', KEYS[i])
  if counts[i] >= tonumber(ARGV[3 + i]) then
    return {0, i, unpack(counts)}
  end
end
for i = 1, n do
  redis.call('ZADD', KEYS[i], ARGV[2], ARGV[3])
  if redis.call('PTTL', KEYS[i]) < tonumber(ARGV[2]) - now then
    redis.call('PEXPIREAT', KEYS[i], ARGV[2])
  end
  counts[i] = counts[i] + 1
end
return {1, 0, unpack(counts)}
`);

const RELEASE = new RedisScript(`
for i = 1, #KEYS do redis.call('ZREM', KEYS[i], ARGV[1]) end
return 1
`);

export class RedisSlots implements ConcurrencySlots {
  private readonly redis: () => Redis | undefined;
  private readonly prefix: string;
  private readonly send: (
    what: string,
    work: (client: Redis) => Promise<unknown>,
    owed?: (client: Redis) => Promise<unknown>,
  ) => void;
  private readonly now: () => number;

  constructor(
    redis: () => Redis | undefined,
    prefix: string,
    send: (what: string, work: (client: Redis) => Promise<unknown>, owed?: (client: Redis) => Promise<unknown>) => void,
    now: () => number = Date.now,
  ) {
    this.redis = redis;
    this.prefix = prefix;
    this.send = send;
    this.now = now;
  }

  async acquire(claims: readonly SlotClaim[], requestId: string, ttlMs: number): Promise<SlotOutcome> {
    const client = this.redis();
    if (!client) throw new Error('Redis is not connected');
    const now = this.now();
    const reply = (await ACQUIRE.run(client, {
      keys: claims.map((c) => this.key(c)),
      arguments: [String(now), String(now + ttlMs), requestId, ...claims.map((c) => String(c.limit))],
    })) as number[];
    const inUse = reply.slice(2).map(Number);
    return reply[0] === 1 ? { ok: true, inUse } : { ok: false, refused: Number(reply[1]) - 1, inUse };
  }

  release(claims: readonly SlotClaim[], requestId: string): void {
    // One command whatever the claims (a MULTI of ZREMs is four): each command costs ~15 us of
    // CPU here even pipelined (bench/admission.ts).
    // Owed to Redis if it is away now: else the slot is held until it expires (deadline + 60 s).
    const release = (client: Redis) => RELEASE.run(client, { keys: claims.map((c) => this.key(c)), arguments: [requestId] });
    this.send('release a concurrency slot', release, release);
  }

  /** The slots not expired yet (a crashed instance's lapse by their score), counted without the script: a read. */
  async inUse(subjects: readonly string[]): Promise<number[]> {
    const client = this.redis();
    if (!client) throw new Error('Redis is not connected');
    const now = this.now();
    return Promise.all(subjects.map((subject) => client.zCount(this.key({ subject, limit: 0 }), `(${now}`, '+inf')));
  }

  private key(claim: SlotClaim): string {
    return `${this.prefix}slots:${claim.subject}`;
  }
}
