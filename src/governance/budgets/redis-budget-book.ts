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
 * store the first time a window is used (and again if Redis lost it). Per window, ARGV carries
 * its limit, how long its keys live, and its spend from the store ('' when this instance has seen
 * the window in Redis already): the script writes that spend only where Redis has none, so the
 * first request of a window makes the same one round trip as the others.
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
  if not spent then
    if ARGV[5 + 3 * i] == '' then return {'seed', i} end
    spent = ARGV[5 + 3 * i]
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
  private readonly send: (what: string, work: (client: Redis) => Promise<unknown>) => void;
  private readonly now: () => number;
  /** Windows this instance has seen in Redis, with when their keys expire: their spend need not be sent. */
  private readonly seen = new Map<string, number>();
  /** Spend read by ready() for the reserve that follows it (taken by that reserve). */
  private readonly readied = new Map<string, string>();
  private pruneAt = PRUNE_AT;

  constructor(
    redis: () => Redis | undefined,
    prefix: string,
    spend: SpendLedger,
    send: (what: string, work: (client: Redis) => Promise<unknown>) => void,
    now: () => number = Date.now,
  ) {
    this.redis = redis;
    this.prefix = prefix;
    this.spend = spend;
    this.send = send;
    this.now = now;
  }

  async reserve(windows: readonly BudgetWindow[], id: string, want: number, min: number, ttlMs: number): Promise<ReserveOutcome> {
    // A window not seen in Redis yet goes with its spend from the store (a store read off the
    // usual path, once per window and instance). A 'seed' answer means Redis lost a window it had
    // (flushed, evicted): the windows are read from the store again and sent once more.
    for (let attempt = 0; attempt < 2; attempt++) {
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
        for (const w of windows) this.seen.delete(w.id);
        continue;
      }
      if (reply[0] === 'ok') {
        this.remember(windows, now);
        return { ok: true, granted: Number(reply[1]) };
      }
      // Refused at window i: the script did not reach (nor seed) the ones after it.
      this.remember(windows.slice(0, Number(reply[1])), now);
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
    this.send('settle a budget reservation', (client) =>
      SETTLE.run(client, { keys: this.keys(windows), arguments: [id, String(Math.round(costNanos))] }),
    );
  }

  /**
   * A window not seen in Redis yet is read from the store first. Done before the admission sends
   * its rate and slot scripts, the store read (a round trip to the SQLite thread or PostgreSQL)
   * no longer parts the reserve from them: one write to Redis, not two.
   */
  ready(windows: readonly BudgetWindow[]): Promise<void> | undefined {
    if (windows.every((w) => this.seen.has(w.id))) return undefined;
    return Promise.resolve(this.seeds(windows)).then((seeds) => {
      windows.forEach((w, i) => seeds[i] && this.readied.set(w.id, seeds[i]));
    });
  }

  /** Per window, '' when Redis has it already, else its spend as the store has it (or as ready() just read it). */
  private seeds(windows: readonly BudgetWindow[]): Promise<string[]> | string[] {
    if (windows.every((w) => this.seen.has(w.id))) return windows.map(() => '');
    return Promise.all(
      windows.map(async (w) => {
        if (this.seen.has(w.id)) return '';
        const read = this.readied.get(w.id);
        this.readied.delete(w.id);
        return read ?? String(await this.spend.seed(w));
      }),
    );
  }

  /** Windows Redis has; those whose keys have expired are forgotten as the map grows (a window per key per day). */
  private remember(windows: readonly BudgetWindow[], now: number): void {
    for (const w of windows) this.seen.set(w.id, w.end + KEEP_MS);
    if (this.seen.size < this.pruneAt) return;
    for (const [windowId, until] of this.seen) if (until <= now) this.seen.delete(windowId);
    this.pruneAt = Math.max(PRUNE_AT, this.seen.size * 2);
  }

  private keys(windows: readonly BudgetWindow[]): string[] {
    return windows.flatMap((w) => [`${this.prefix}budget:${w.id}`, `${this.prefix}budget:${w.id}:holds`]);
  }
}
