import type { Redis } from '../limits/redis-link.ts';
import type { BudgetBook, ReserveOutcome } from './budget-book.ts';
import type { BudgetWindow } from './budget-windows.ts';
import type { SpendLedger } from './spend-ledger.ts';

/** Windows' hashes live a day past their period (a late settlement still finds them). */
const KEEP_MS = 24 * 3_600_000;

/**
 * Per window, a hash {spent, reserved, r:<request id>} and a sorted set of the reservations by
 * expiry. Hand-written Lua (rate-limiter-flexible counts one number per key; a budget needs
 * check-then-reserve across several windows, partial grants and expiring holds, atomically):
 * every instance sees the same spend and the same live reservations, and two instances can never
 * both take the last dollar. The spend in Redis is a mirror of the store's, seeded from the
 * store the first time a window is used (and again if Redis lost it).
 */
const RESERVE = `
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
  if not spent then return {'seed', i} end
  local reserved = tonumber(redis.call('HGET', h, 'reserved') or '0')
  local room = tonumber(ARGV[4 + 2 * i]) - tonumber(spent) - reserved
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
  redis.call('PEXPIREAT', h, ARGV[5 + 2 * i])
  redis.call('PEXPIREAT', z, ARGV[5 + 2 * i])
end
return {'ok', grant}
`;

const SETTLE = `
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
`;

export class RedisBudgetBook implements BudgetBook {
  private readonly redis: () => Redis | undefined;
  private readonly prefix: string;
  private readonly spend: SpendLedger;
  private readonly send: (what: string, work: (client: Redis) => Promise<unknown>) => void;
  private readonly now: () => number;

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
    // A window Redis has not seen (or lost) is seeded from the store, then the reservation is
    // tried again: at most once per window, a store read off the usual path.
    for (let attempt = 0; attempt <= windows.length; attempt++) {
      const client = this.redis();
      if (!client) throw new Error('Redis is not connected');
      const now = this.now();
      const reply = (await client.eval(RESERVE, {
        keys: this.keys(windows),
        arguments: [
          String(now),
          id,
          String(Math.floor(want)),
          String(Math.ceil(min)),
          String(now + ttlMs),
          ...windows.flatMap((w) => [String(w.limitNanos), String(w.end + KEEP_MS)]),
        ],
      })) as [string, ...unknown[]];
      if (reply[0] === 'ok') return { ok: true, granted: Number(reply[1]) };
      const window = windows[Number(reply[1]) - 1];
      if (reply[0] === 'refused') return { ok: false, window, spentNanos: Number(reply[2]), reservedNanos: Number(reply[3]) };
      await this.seed(client, window);
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
      client.eval(SETTLE, { keys: this.keys(windows), arguments: [id, String(Math.round(costNanos))] }),
    );
  }

  private async seed(client: Redis, window: BudgetWindow): Promise<void> {
    const spent = await this.spend.seed(window);
    const [hash] = this.keys([window]);
    await client
      .multi()
      .hSetNX(hash, 'spent', String(spent))
      .pExpireAt(hash, window.end + KEEP_MS)
      .exec();
  }

  private keys(windows: readonly BudgetWindow[]): string[] {
    return windows.flatMap((w) => [`${this.prefix}budget:${w.id}`, `${this.prefix}budget:${w.id}:holds`]);
  }
}
