import type { Redis } from '../../store/redis-link.ts';
import { RedisScript } from '../limits/redis-script.ts';
import type { BudgetBook, ReserveOutcome } from './budget-book.ts';
import type { BudgetWindow } from './budget-windows.ts';
import type { SpendLedger } from './spend-ledger.ts';

/** Windows' hashes live a day past their period (a late settlement still finds them). */
const KEEP_MS = 24 * 3_600_000;
/** The size past which the windows this instance has seen in Redis are pruned of expired ones. */
const PRUNE_AT = 1_024;

/**
 * Per window, a hash {spent, reserved, r:<request id>} and a sorted set of the reservations by
 * expiry. Hand-written Lua (rate-limiter-flexible counts one number per key; a budget needs
 * check-then-reserve across several windows, partial grants and expiring holds, atomically):
 * every instance sees the same spend and the same live reservations, and two instances can never
 * both take the last dollar. The spend in Redis is a mirror of the store's, seeded from the
 * store the first time an instance uses a window, again if Redis lost it, and again after Redis
 * was away (what the instances spent meanwhile is in the store, not in the mirror). Per window,
 * ARGV carries its limit, how long its keys live, and its spend from the store ('' when this
 * instance has seen the window in Redis already): the script keeps the larger of that spend and
 * the mirror's (each may lack what the other has not seen yet; too much, never too little), so
 * the first request of a window makes the same one round trip as the others.
 */
const RESERVE = new RedisScript(`
local now = tonumber(ARGV[1])
local id = ARGV[2]
local want = tonumber(ARGV[3])
local min = tonumber(ARGV[4])
local expiresAt = ARGV[5]
local n = #KEYS / 2
local grant = want
for i = 1, n do
  local h, z = KEYS[2 * i - 1], KEYS[2 * i]
  for _, rid in ipairs(redis.call('ZRANGEBYSCORE', z, '-inf', now)) do
    local amount = redis.call('HGET', h, 'r:' .. rid)
    if amount then
      redis.call('HINCRBY', h, 'reserved', -tonumber(amount))
      redis.call('HDEL', h, 'r:' .. rid)
    end
    redis.call('ZREM', z, rid)
  end
  local spent = redis.call('HGET', h, 'spent')
  local seed = ARGV[5 + 3 * i]
  if not spent and seed == '' then return {'seed', i} end
  if seed ~= '' and (not spent or tonumber(seed) > tonumber(spent)) then
    spent = seed
    redis.call('HSET', h, 'spent', spent)
    redis.call('PEXPIREAT', h, ARGV[4 + 3 * i])
  end
  local reserved = tonumber(redis.call('HGET', h, 'reserved') or '0')
  local room = tonumber(ARGV[3 + 3 * i]) - tonumber(spent) - reserved
  if room < min then return {'refused', i, spent, tostring(reserved)} end
  if room < grant then grant = room end
end
if grant < 0 then grant = 0 end
for i = 1, n do
  local h, z = KEYS[2 * i - 1], KEYS[2 * i]
  if grant > 0 then
    redis.call('HINCRBY', h, 'reserved', grant)
    redis.call('HINCRBY', h, 'r:' .. id, grant)
  end
  redis.call('ZADD', z, expiresAt, id)
  redis.call('PEXPIREAT', h, ARGV[4 + 3 * i])
  redis.call('PEXPIREAT', z, ARGV[4 + 3 * i])
end
return {'ok', grant}
`);

const SETTLE = new RedisScript(`
local id = ARGV[1]
local cost = tonumber(ARGV[2])
for i = 1, #KEYS / 2 do
  local h, z = KEYS[2 * i - 1], KEYS[2 * i]
  local amount = redis.call('HGET', h, 'r:' .. id)
  if amount then
    redis.call('HINCRBY', h, 'reserved', -tonumber(amount))
    redis.call('HDEL', h, 'r:' .. id)
  end
  redis.call('ZREM', z, id)
  if cost > 0 and redis.call('HEXISTS', h, 'spent') == 1 then redis.call('HINCRBY', h, 'spent', cost) end
end
return 1
`);

export class RedisBudgetBook implements BudgetBook {
  private readonly redis: () => Redis | undefined;
  private readonly prefix: string;
  private readonly spend: SpendLedger;
  private readonly send: Send;
  private readonly now: () => number;
  /** Windows this instance has seen in Redis, with when their keys expire: their spend need not be sent. */
  private readonly seen = new Map<string, number>();
  /** Spend read from the store for windows not seen yet, until a reserve has carried it to Redis. */
  private readonly seeded = new Map<string, string>();
  /** Reads of the store in progress: one per window, however many requests of it arrive at once. */
  private readonly seeding = new Map<string, Promise<string>>();
  /** Bumped by forget(): what was read or seen before it does not count after it. */
  private epoch = 0;
  private pruneAt = PRUNE_AT;

  constructor(redis: () => Redis | undefined, prefix: string, spend: SpendLedger, send: Send, now: () => number = Date.now) {
    this.redis = redis;
    this.prefix = prefix;
    this.spend = spend;
    this.send = send;
    this.now = now;
  }

  async reserve(windows: readonly BudgetWindow[], id: string, want: number, min: number, ttlMs: number): Promise<ReserveOutcome> {
    // A window not seen in Redis yet goes with its spend from the store (read by ready(), once
    // per window and instance). A 'seed' answer means Redis lost a window it had (flushed,
    // evicted): the windows are read from the store again and sent once more.
    for (let attempt = 0; attempt < 2; attempt++) {
      const epoch = this.epoch;
      const seeds = await this.seeds(windows);
      const client = this.redis();
      if (!client) throw new Error('Redis is not connected');
      const now = this.now();
      const reply = (await RESERVE.run(client, {
        keys: this.keys(windows),
        arguments: [
          String(now),
          id,
          String(Math.floor(want)),
          String(Math.ceil(min)),
          String(now + ttlMs),
          ...windows.flatMap((w, i) => [String(w.limitNanos), String(w.end + KEEP_MS), seeds[i]]),
        ],
      })) as [string, ...unknown[]];
      if (reply[0] === 'seed') {
        for (const w of windows) this.unsee(w.id);
        continue;
      }
      if (reply[0] === 'ok') {
        this.remember(windows, now, epoch);
        return { ok: true, granted: Number(reply[1]) };
      }
      // Refused at window i: the script did not reach (nor seed) the ones after it.
      this.remember(windows.slice(0, Number(reply[1])), now, epoch);
      const window = windows[Number(reply[1]) - 1];
      return { ok: false, window, spentNanos: Number(reply[2]), reservedNanos: Number(reply[3]) };
    }
    throw new Error('budget windows could not be seeded');
  }

  async extend(windows: readonly BudgetWindow[], id: string, want: number, ttlMs: number): Promise<number> {
    const outcome = await this.reserve(windows, id, want, 0, ttlMs);
    return outcome.ok ? outcome.granted : 0;
  }

  settle(windows: readonly BudgetWindow[], id: string, costNanos: number): void {
    for (const w of windows) this.spend.add(w, costNanos);
    const keys = this.keys(windows);
    this.send(
      'settle a budget reservation',
      (client) => SETTLE.run(client, { keys, arguments: [id, String(Math.round(costNanos))] }),
      // Once Redis is back: the hold released (else it lasts until it expires); the cost is in the
      // store, and reaches the mirror with the seed sent after the outage.
      (client) => SETTLE.run(client, { keys, arguments: [id, '0'] }),
    );
  }

  /**
   * Adds a cost to the mirror without a reservation of Redis's to release: a request admitted on
   * an instance's own book while Redis was away, settled now that it is back (its spend is in the
   * store already, through the SpendLedger).
   */
  mirror(windows: readonly BudgetWindow[], costNanos: number): void {
    if (costNanos <= 0) return;
    this.send('add a spend to the shared budgets', (client) =>
      SETTLE.run(client, { keys: this.keys(windows), arguments: ['', String(Math.round(costNanos))] }),
    );
  }

  /** Redis was away: every window's spend is sent again with its next reserve (the mirror missed what was spent meanwhile). */
  forget(): void {
    this.epoch++;
    this.seen.clear();
    this.seeded.clear();
    this.seeding.clear();
  }

  /**
   * A window not seen in Redis yet is read from the store first. Done before the admission sends
   * its commands, the store read (a round trip to the SQLite thread or PostgreSQL, waiting for
   * the pool under a burst) is neither inside Redis's timeout nor between the admission's
   * commands, which leave in one write.
   */
  ready(windows: readonly BudgetWindow[]): Promise<void> | undefined {
    if (windows.every((w) => this.seen.has(w.id) || this.seeded.has(w.id))) return undefined;
    return Promise.all(windows.map((w) => Promise.resolve(this.seedOf(w)))).then(() => {});
  }

  /** Per window, '' when Redis has it already, else its spend as the store has it. */
  private seeds(windows: readonly BudgetWindow[]): Promise<string[]> | string[] {
    if (windows.every((w) => this.seen.has(w.id))) return windows.map(() => '');
    return Promise.all(windows.map((w) => Promise.resolve(this.seen.has(w.id) ? '' : this.seedOf(w))));
  }

  private seedOf(w: BudgetWindow): string | Promise<string> {
    const read = this.seeded.get(w.id);
    if (read !== undefined) return read;
    let pending = this.seeding.get(w.id);
    if (!pending) {
      const epoch = this.epoch;
      pending = Promise.resolve(this.spend.seed(w)).then(
        (nanos) => {
          if (this.epoch !== epoch) return String(nanos);
          this.seeding.delete(w.id);
          if (!this.seen.has(w.id)) this.seeded.set(w.id, String(nanos));
          return String(nanos);
        },
        (err: unknown) => {
          if (this.epoch === epoch) this.seeding.delete(w.id);
          throw err;
        },
      );
      this.seeding.set(w.id, pending);
    }
    return pending;
  }

  private unsee(windowId: string): void {
    this.seen.delete(windowId);
    this.seeded.delete(windowId);
  }

  /** Windows Redis has; those whose keys have expired are forgotten as the map grows (a window per key per day). */
  private remember(windows: readonly BudgetWindow[], now: number, epoch: number): void {
    // A reserve that started before Redis went away carried no seed of what was spent meanwhile.
    if (epoch !== this.epoch) return;
    for (const w of windows) {
      this.seen.set(w.id, w.end + KEEP_MS);
      this.seeded.delete(w.id);
    }
    if (this.seen.size < this.pruneAt) return;
    for (const [windowId, until] of this.seen) if (until <= now) this.seen.delete(windowId);
    this.pruneAt = Math.max(PRUNE_AT, this.seen.size * 2);
  }

  private keys(windows: readonly BudgetWindow[]): string[] {
    return windows.flatMap((w) => [`${this.prefix}budget:${w.id}`, `${this.prefix}budget:${w.id}:holds`]);
  }
}

/** RedisLink.send: fire and forget, with what is still owed to Redis should it fail. */
type Send = (what: string, work: (client: Redis) => Promise<unknown>, owed?: (client: Redis) => Promise<unknown>) => void;
