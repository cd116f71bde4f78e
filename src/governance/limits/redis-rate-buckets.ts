import type { LimitState } from './rate-limit-headers.ts';
import {
  outcomeOf,
  type RateBuckets,
  type RateCharge,
  type RateOutcome,
  type RateSettlement,
  bucketName,
  stateOf,
} from './rate-buckets.ts';
import type { Redis } from '../../store/redis-link.ts';
import { RedisScript } from './redis-script.ts';
import { type BucketState, drain } from './token-bucket.ts';

/**
 * The drain of token-bucket.ts in Lua (doubles, like JavaScript's numbers: the same integers,
 * the same answers). Numbers are written with %.0f: Lua's tostring keeps 14 digits only.
 */
const DRAIN = `
local function drain(key, limit, now)
  local s = redis.call('HMGET', key, 'o', 'a')
  local o = tonumber(s[1]) or 0
  local a = tonumber(s[2]) or 0
  local elapsed = math.max(0, now - a)
  if elapsed >= math.ceil(o / limit) then o = 0 else o = o - elapsed * limit end
  return o, math.max(now, a)
end
local function store(key, limit, o, a)
  if o <= 0 then
    redis.call('DEL', key)
  else
    redis.call('HSET', key, 'o', string.format('%.0f', o), 'a', string.format('%.0f', a))
    redis.call('PEXPIRE', key, math.ceil(o / limit) + 1000)
  end
end
`;

/**
 * checkAll over every charge of a request: drain each bucket, refuse at the first that cannot
 * take its points (writing nothing), else take them all. Replies the index of the refused charge
 * (1-based, 0 for none) and each bucket's owed and at after the check.
 */
const CONSUME = new RedisScript(`${DRAIN}
local now = tonumber(ARGV[1])
local n = #KEYS
local owed, at = {}, {}
local refused = 0
for i = 1, n do
  local limit, points = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])
  owed[i], at[i] = drain(KEYS[i], limit, now)
  if refused == 0 and owed[i] + points * 60000 > limit * 60000 then refused = i end
end
if refused == 0 then
  for i = 1, n do
    owed[i] = owed[i] + tonumber(ARGV[2 * i + 1]) * 60000
    store(KEYS[i], tonumber(ARGV[2 * i]), owed[i], at[i])
  end
end
local reply = {refused}
for i = 1, n do
  reply[2 * i] = string.format('%.0f', owed[i])
  reply[2 * i + 1] = string.format('%.0f', at[i])
end
return reply
`);

/** reconcile() of token-bucket.ts per settlement: ARGV now, then limit, charged, used, chargedAt each. */
const RECONCILE = new RedisScript(`${DRAIN}
local now = tonumber(ARGV[1])
for i = 1, #KEYS do
  local limit, charged = tonumber(ARGV[4 * i - 2]), tonumber(ARGV[4 * i - 1])
  local used, chargedAt = tonumber(ARGV[4 * i]), tonumber(ARGV[4 * i + 1])
  local o, a = drain(KEYS[i], limit, now)
  if used >= charged then
    o = o + (used - charged) * 60000
  else
    local still = math.max(0, charged * 60000 - math.max(0, a - chargedAt) * limit)
    o = o - math.min((charged - used) * 60000, still, o)
  end
  store(KEYS[i], limit, o, a)
end
return 1
`);

/**
 * The buckets in Redis, shared by every instance: one hash {o: owed, a: at} per subject and
 * kind, living until its bucket is full again. A request's charges are one script (atomic: two
 * instances never both take the last point), sent in the same tick as the slots and the budget,
 * so node-redis writes them together: one round trip.
 */
export class RedisRateBuckets implements RateBuckets {
  private readonly redis: Redis;
  private readonly prefix: string;

  constructor(redis: Redis, prefix: string) {
    this.redis = redis;
    this.prefix = prefix;
  }

  async consume(charges: readonly RateCharge[], now: number): Promise<RateOutcome> {
    const reply = (await CONSUME.run(this.redis, {
      keys: charges.map((c) => this.key(c)),
      arguments: [String(now), ...charges.flatMap((c) => [String(c.limit), String(c.points)])],
    })) as (number | string)[];
    const states: BucketState[] = charges.map((_, i) => ({ owed: Number(reply[2 * i + 1]), at: Number(reply[2 * i + 2]) }));
    return outcomeOf(charges, { refused: Number(reply[0]) - 1, drained: states, after: states });
  }

  reconcile(settlements: readonly RateSettlement[], now: number): Promise<unknown> {
    return RECONCILE.run(this.redis, {
      keys: settlements.map((s) => this.key(s.charge)),
      arguments: [
        String(now),
        ...settlements.flatMap((s) => [String(s.charge.limit), String(s.charge.points), String(s.used), String(s.chargedAt)]),
      ],
    });
  }

  /** Plain reads (node-redis sends them together: one round trip), drained here as DRAIN does in the scripts. */
  async peek(charges: readonly RateCharge[], now: number): Promise<LimitState[]> {
    const stored = await Promise.all(charges.map((c) => this.redis.hmGet(this.key(c), ['o', 'a'])));
    return charges.map((c, i) => {
      const [owed, at] = stored[i];
      return stateOf(drain({ owed: Number(owed ?? 0), at: Number(at ?? 0) }, c.limit, now), c.limit);
    });
  }

  private key(charge: RateCharge): string {
    return `${this.prefix}rate:${bucketName(charge)}`;
  }
}
