import type { Kysely } from 'kysely';
import type { BudgetSpend, LedgerRecord } from '../accounting/ledger-record.ts';
import type { PricingRegistry } from '../accounting/pricing.ts';
import type { Config } from '../config/schema.ts';
import { errors } from '../errors/catalog.ts';
import type { Admission, AdmissionRequest, Admit, Caller, RateLimitWarning } from '../admission/admission.ts';
import type { Database } from '../store/database.ts';
import { type BudgetBook, MemoryBudgetBook, type ReserveOutcome } from './budgets/budget-book.ts';
import { BudgetGuard } from './budgets/budget-guard.ts';
import { type BudgetWindow, budgetWindows, NANOS_PER_USD, toNanos } from './budgets/budget-windows.ts';
import { RedisBudgetBook } from './budgets/redis-budget-book.ts';
import { estimatePromptTokens, outputAllowance, PriceBook } from './budgets/request-estimate.ts';
import { SpendLedger } from './budgets/spend-ledger.ts';
import { SpendStore } from './budgets/spend-store.ts';
import { type ConcurrencySlots, MemorySlots, RedisSlots, type SlotClaim, type SlotOutcome } from './limits/concurrency-slots.ts';
import {
  formatResetDuration,
  type LimitState,
  rateLimitHeaders,
  retryAfterHeaders,
  tighter,
} from './limits/rate-limit-headers.ts';
import {
  MemoryRateBuckets,
  type RateBuckets,
  type RateCharge,
  type RateOutcome,
  type RateSettlement,
} from './limits/rate-buckets.ts';
import { RedisRateBuckets } from './limits/redis-rate-buckets.ts';
import { type Redis, RedisLink, RedisUnavailable } from '../store/redis-link.ts';
import { TierBook, type TierPolicy, tierDisplayName } from './limits/tier-policy.ts';
import { type CallerUsage, usageOf } from './usage-report.ts';

export interface GovernanceDeps {
  pricing: PricingRegistry;
  log: (message: string) => void;
  now?: () => number;
}

/** A caller within this share of a per-minute limit gets a rate_limit_warning (reference/accounting-events.txt). */
const WARN_SHARE = 0.1;
/** Reservations and slots outlive their request's deadline by this much before they lapse on their own. */
const HOLD_MARGIN_MS = 60_000;

const NOTHING_TO_SETTLE: Admission = { settle: () => {} };

/**
 * The admit step for tiers, limits and budgets (docs/governance/tiers-limits-budgets.md): every model
 * request is charged to its key's and project's per-minute token buckets (requests, and tokens with
 * the prompt's estimate), takes an in-flight slot and reserves its estimated cost in every budget
 * window, all at once (with Redis: one pipelined round trip), or is refused before any output.
 * Its settlement gives back the slot, reconciles the tokens with the real usage and turns the
 * reservation into the real cost.
 */
export class LimitsAndBudgets {
  private readonly config: Config;
  private readonly tiers: TierBook;
  private readonly prices: PriceBook;
  private readonly log: (message: string) => void;
  private readonly now: () => number;
  private readonly link: RedisLink | undefined;
  private readonly prefix: string;
  private readonly spend: SpendLedger;
  private spendStore: SpendStore | undefined;
  private readonly memoryRates = new MemoryRateBuckets();
  private redisRates: { generation: number; rates: RedisRateBuckets } | undefined;
  private readonly slots: ConcurrencySlots;
  private readonly book: BudgetBook;
  private readonly defaultHoldMs: number;

  constructor(config: Config, deps: GovernanceDeps) {
    this.config = config;
    this.prefix = config.limits.redis_prefix;
    this.log = deps.log;
    this.now = deps.now ?? Date.now;
    this.tiers = new TierBook(config, deps.log);
    this.prices = new PriceBook(deps.pricing);
    this.spend = new SpendLedger({ refreshMs: 1_000, log: deps.log, now: this.now });
    const redisUrl = config.limits.redis_url;
    // Redis only when something is shared through it: a gateway without tiers never connects.
    this.link =
      redisUrl && this.tiers.size > 0
        ? new RedisLink({ url: redisUrl, timeoutMs: config.limits.redis_timeout_ms, log: deps.log })
        : undefined;
    const link = this.link;
    if (link) {
      const client = () => link.client;
      const send = (what: string, work: (c: Redis) => Promise<unknown>) => link.send(what, work);
      this.slots = new RedisSlots(client, this.prefix, send, this.now);
      this.book = new RedisBudgetBook(client, this.prefix, this.spend, send, this.now);
    } else {
      this.slots = new MemorySlots();
      this.book = new MemoryBudgetBook(this.spend, this.now);
    }
    const longest = Math.max(config.stream.deadline_s, config.responses.deadline_s) * 1000;
    this.defaultHoldMs = longest > 0 ? longest : 3_600_000;
  }

  /** Connects to Redis (when configured), waiting a bounded time; a failure is retried in the background. */
  async start(): Promise<void> {
    await this.link?.start();
  }

  /**
   * For GET /readyz: a PING through the admissions' own link (so within limits.redis_timeout_ms,
   * and a silent connection is dropped as an admission would drop it). Undefined when no limit
   * goes through Redis.
   */
  get pingRedis(): (() => Promise<void>) | undefined {
    const link = this.link;
    return link && (() => link.run((client) => client.ping()).then(() => undefined));
  }

  /** The store is open: budget spend is read there from now on (written with the ledger's rows). */
  attachStore(db: Kysely<Database>): void {
    this.spendStore = new SpendStore(db);
    this.spend.attach(this.spendStore);
  }

  /**
   * What each caller's limits and budgets hold now (the console's keys page), charging nothing.
   * Plain reads, not the admission's timed link: a slow read of many keys must not drop the
   * connection admissions use.
   */
  usage(callers: readonly Caller[]): Promise<CallerUsage[]> {
    if (this.link && !this.link.client)
      throw errors.limitsUnavailable(
        'Redis (limits.redis_url) is not connected: the limits in use cannot be read; try again shortly.',
      );
    const store = this.spendStore;
    return usageOf(callers, {
      tierOf: (caller) => this.tiers.of(caller),
      rates: this.rates(),
      slots: this.slots,
      spent: (ids) => store?.spent(ids) ?? Promise.resolve(new Map()),
      now: this.now(),
    });
  }

  /** The ledger writer stored these records, and with them their spend. */
  readonly spendWritten = (records: readonly LedgerRecord[]): void => {
    for (const r of records) if (r.budgetSpend) this.spend.written(r.budgetSpend);
  };

  async close(): Promise<void> {
    await this.spend.close();
    await this.link?.close();
  }

  readonly admit: Admit = (req) => {
    const tier = this.tiers.of(req.caller);
    if (!tier && req.caller.budgets.length === 0) return NOTHING_TO_SETTLE;
    return this.admitGoverned(req, tier);
  };

  private async admitGoverned(req: AdmissionRequest, tier: TierPolicy | undefined): Promise<Admission> {
    const { requestId } = req;
    const now = this.now();
    const plan = this.plan(req, tier, now);
    let checked: Checked;
    try {
      checked = this.link ? await this.link.run(() => this.check(plan, requestId, now)) : await this.check(plan, requestId, now);
    } catch (err) {
      if (!(err instanceof RedisUnavailable)) throw err;
      if (tier?.redisUnavailable === 'fail_closed') throw errors.limitsUnavailable();
      // fail_open: admitted without the shared limits and budgets while Redis is away (logged by the link).
      return { ...this.tierTimes(tier), settle: () => {} };
    }
    const headers = this.headers(plan, checked);
    this.refuseIfOver(plan, checked, headers, now);
    const maxOutputTokens = req.streamed ? undefined : outputCap(plan.budget, checked.budget);

    const guard =
      req.streamed && plan.budget && checked.budget?.ok
        ? new BudgetGuard({
            book: this.book,
            windows: plan.budget.windows,
            requestId,
            inputNanos: plan.budget.inputNanos,
            outputNanosPerToken: plan.budget.outputNanosPerToken,
            reserved: checked.budget.granted,
            stepNanos: plan.budget.stepNanos,
            ttlMs: plan.holdMs,
            log: this.log,
          })
        : undefined;
    return {
      headers,
      ...this.tierTimes(tier),
      warning: this.warning(plan, checked.rates),
      watch: guard?.watch,
      maxOutputTokens,
      settle: (record) => this.settle(plan, requestId, tier, guard, now, record, maxOutputTokens !== undefined),
    };
  }

  /** What this request asks of each limit and budget. */
  private plan(req: AdmissionRequest, tier: TierPolicy | undefined, now: number): Plan {
    const { caller, request, target, streamed } = req;
    const key = caller.keyId === null ? undefined : `key:${caller.keyId}`;
    const project = caller.projectId === null ? undefined : `project:${caller.projectId}`;
    const rules = tier && tier.budgets.length > 0 ? [...tier.budgets, ...caller.budgets] : caller.budgets;
    const windows = rules.length > 0 ? budgetWindows(rules, caller, now) : [];
    const needsTokens =
      windows.length > 0 || tier?.key.tokensPerMinute !== undefined || tier?.project.tokensPerMinute !== undefined;
    const promptTokens = needsTokens ? estimatePromptTokens(request) : 0;
    const charges: RateCharge[] = [];
    const scopes: ('key' | 'project')[] = [];
    const claims: SlotClaim[] = [];
    if (tier?.limited) {
      for (const [scope, subject, limits] of [
        ['key', key, tier.key],
        ['project', project, tier.project],
      ] as const) {
        if (!subject) continue;
        if (limits.requestsPerMinute !== undefined) {
          charges.push({ subject, kind: 'requests', limit: limits.requestsPerMinute, points: 1 });
          scopes.push(scope);
        }
        if (limits.tokensPerMinute !== undefined) {
          charges.push({ subject, kind: 'tokens', limit: limits.tokensPerMinute, points: promptTokens });
          scopes.push(scope);
        }
        if (limits.concurrentRequests !== undefined) {
          claims.push({ subject, limit: limits.concurrentRequests });
        }
      }
    }
    let budget: BudgetPlan | undefined;
    if (windows.length > 0) {
      const prices = this.prices.of(target.provider, target.model);
      const inputNanos = promptTokens * prices.inputNanos;
      const outputNanos = outputAllowance(request, this.config.limits.reserve_output_tokens) * prices.outputNanos;
      const ownMax = request.max_completion_tokens ?? request.max_tokens;
      budget = {
        windows,
        inputNanos,
        outputNanosPerToken: prices.outputNanos,
        want: Math.ceil(inputNanos + outputNanos),
        // A spent budget refuses everything, a free model included; otherwise the prompt must fit,
        // and a non-streamed answer (which cannot be cut) needs room for one token of it.
        min: Math.max(1, Math.ceil(inputNanos + (streamed ? 0 : prices.outputNanos))),
        stepNanos: Math.max(1, Math.ceil(outputNanos)),
        ownMax: typeof ownMax === 'number' && ownMax > 0 ? ownMax : undefined,
      };
    }
    const holdMs = (tier?.deadlineMs || this.defaultHoldMs) + HOLD_MARGIN_MS;
    return { charges, scopes, claims, budget, holdMs };
  }

  /** Every limit and the budget at once; what one refused is given back by the others. */
  private async check(plan: Plan, requestId: string, now: number): Promise<Checked> {
    // A budget window's first request here reads its spend from the store before Redis hears of
    // it: waited for first, so that every command of the admission leaves in one write. A failed
    // read is the reserve's to report (it reads again).
    const readying = plan.budget && this.book.ready?.(plan.budget.windows);
    if (readying) await readying.catch(() => {});
    const rates = plan.charges.length > 0 ? this.rates().consume(plan.charges, now) : undefined;
    const slots = plan.claims.length > 0 ? this.slots.acquire(plan.claims, requestId, plan.holdMs) : undefined;
    const budget = plan.budget
      ? this.book.reserve(plan.budget.windows, requestId, plan.budget.want, plan.budget.min, plan.holdMs)
      : undefined;
    const [r, s, b] = await Promise.allSettled([rates, slots, budget]);
    const checked: Checked = {
      rates: r.status === 'fulfilled' ? r.value : undefined,
      slots: s.status === 'fulfilled' ? s.value : undefined,
      budget: b.status === 'fulfilled' ? b.value : undefined,
    };
    const failed = [r, s, b].find((x): x is PromiseRejectedResult => x.status === 'rejected');
    const refused = checked.rates?.ok === false || checked.slots?.ok === false || checked.budget?.ok === false;
    if (failed || refused) {
      // Give back what was taken (the rate buckets take nothing when one of them refuses).
      if (checked.rates?.ok) this.reconcileRates(plan.charges.map((charge) => ({ charge, used: 0, chargedAt: now })));
      if (checked.slots?.ok) this.slots.release(plan.claims, requestId);
      if (plan.budget && checked.budget?.ok) this.book.settle(plan.budget.windows, requestId, 0);
      // With Redis, the link turns any failure into RedisUnavailable (the tier's policy applies).
      if (failed) throw failed.reason;
    }
    return checked;
  }

  /** Throws the refusal, the budget's first (it does not pass with a retry), with the limit headers. */
  private refuseIfOver(plan: Plan, checked: Checked, headers: Record<string, string>, now: number): void {
    const budget = checked.budget;
    if (budget && !budget.ok) {
      const w = budget.window;
      const subject = w.subject.replace(':', ' ');
      const left =
        budget.reservedNanos > 0
          ? ` ($${usd(budget.spentNanos)} spent, $${usd(budget.reservedNanos)} held by requests in progress)`
          : ` ($${usd(budget.spentNanos)} spent)`;
      throw errors.quotaExceeded(
        `You exceeded your current quota: the ${w.period === 'day' ? 'daily' : 'monthly'} budget of $${usd(w.limitNanos)} of ${subject} is used up${left}. It resets at ${new Date(w.end).toISOString()}.`,
        { ...headers, ...retryAfterHeaders(w.end - now) },
      );
    }
    const rates = checked.rates;
    if (rates && !rates.ok) {
      const charge = plan.charges[rates.refused];
      const state = rates.states[rates.refused];
      const what = charge.kind === 'requests' ? 'requests per min (RPM)' : 'tokens per min (TPM)';
      throw errors.rateLimited(
        `Rate limit reached for ${charge.subject.replace(':', ' ')} on ${what}: Limit ${state.limit}, Used ${Math.min(rates.used, state.limit)}, Requested ${charge.points}. Please try again in ${formatResetDuration(rates.retryAfterMs)}.`,
        { ...headers, ...retryAfterHeaders(rates.retryAfterMs) },
      );
    }
    const slots = checked.slots;
    if (slots && !slots.ok) {
      const claim = plan.claims[slots.refused];
      throw errors.rateLimited(
        `Too many concurrent requests for ${claim.subject.replace(':', ' ')}: at most ${claim.limit} may be in progress at once. Please try again when one has finished.`,
        { ...headers, ...retryAfterHeaders(1_000) },
      );
    }
  }

  private headers(plan: Plan, checked: Checked): Record<string, string> {
    const states: { requests?: LimitState; tokens?: LimitState; concurrency?: LimitState } = {};
    const rates = checked.rates;
    if (rates) {
      plan.charges.forEach((c, i) => {
        states[c.kind] = tighter(states[c.kind], rates.states[i]);
      });
    }
    const slots = checked.slots;
    if (slots) {
      plan.claims.forEach((c, i) => {
        states.concurrency = tighter(states.concurrency, {
          limit: c.limit,
          remaining: Math.max(0, c.limit - slots.inUse[i]),
          resetMs: 0,
        });
      });
    }
    return rateLimitHeaders(states);
  }

  /** The tightest per-minute limit within 10% of its end, if any (at most one warning per request). */
  private warning(plan: Plan, rates: RateOutcome | undefined): RateLimitWarning | undefined {
    if (!rates) return undefined;
    let best: RateLimitWarning | undefined;
    plan.charges.forEach((c, i) => {
      const s = rates.states[i];
      if (s.remaining > s.limit * WARN_SHARE) return;
      if (best && s.remaining / s.limit >= best.remaining / best.limit) return;
      best = { scope: plan.scopes[i], limitType: c.kind, limit: s.limit, remaining: s.remaining, resetMs: s.resetMs };
    });
    return best;
  }

  private tierTimes(tier: TierPolicy | undefined): Pick<Admission, 'deadline' | 'idleTimeoutMs' | 'onDisconnect'> {
    if (!tier) return {};
    const times: Pick<Admission, 'deadline' | 'idleTimeoutMs' | 'onDisconnect'> = {};
    if (tier.deadlineMs !== undefined) {
      const seconds = tier.deadlineMs / 1000;
      const name = tierDisplayName(tier.name);
      times.deadline = { ms: tier.deadlineMs, error: () => errors.tierDeadline(name, seconds) };
    }
    if (tier.idleTimeoutMs !== undefined) times.idleTimeoutMs = tier.idleTimeoutMs;
    if (tier.onDisconnect !== undefined) times.onDisconnect = tier.onDisconnect;
    return times;
  }

  private settle(
    plan: Plan,
    requestId: string,
    tier: TierPolicy | undefined,
    guard: BudgetGuard | undefined,
    admittedAt: number,
    record: LedgerRecord,
    capped: boolean,
  ): LedgerRecord | void {
    if (plan.claims.length > 0) this.slots.release(plan.claims, requestId);
    const used = record.inputTokens + record.outputTokens;
    const tokens = plan.charges.filter((c) => c.kind === 'tokens' && c.points !== used);
    if (tokens.length > 0) this.reconcileRates(tokens.map((charge) => ({ charge, used, chargedAt: admittedAt })));
    const voided = tier?.abandoned === 'void' && record.outcome === 'cancelled';
    const cost = voided ? 0 : toNanos(record.costUsd);
    if (plan.budget) this.book.settle(plan.budget.windows, requestId, cost);
    // The budget ended the answer: a stream it stopped, or a non-streamed one that ran into its cap.
    const budgetEnded = guard?.stopped === true || (capped && record.finishReason === 'length');
    const spends = plan.budget !== undefined && cost > 0;
    if (!voided && !budgetEnded && !spends) return;
    const amended: LedgerRecord = { ...record };
    // The reservation is released above; the spend is stored with the row, in its transaction.
    if (spends) amended.budgetSpend = plan.budget!.windows.map((w) => spendOf(w, cost));
    if (voided) {
      amended.costUsd = 0;
      amended.billing = 'void';
    }
    if (budgetEnded) amended.finishReason = 'budget_exhausted';
    return amended;
  }

  /** Charges given back or reconciled with the real usage: one script in Redis, fire and forget. */
  private reconcileRates(settlements: RateSettlement[]): void {
    if (this.link) this.link.send('reconcile the per-minute limits', async () => this.rates().reconcile(settlements, this.now()));
    else this.memoryRates.reconcile(settlements, this.now());
  }

  /** The rate buckets on the current Redis connection (rebuilt after a reconnect), else in memory. */
  private rates(): RateBuckets {
    const link = this.link;
    const client = link?.client;
    if (!link || !client) return this.memoryRates;
    if (this.redisRates?.generation !== link.generation)
      this.redisRates = { generation: link.generation, rates: new RedisRateBuckets(client, this.prefix) };
    return this.redisRates.rates;
  }
}

interface BudgetPlan {
  windows: BudgetWindow[];
  inputNanos: number;
  outputNanosPerToken: number;
  want: number;
  min: number;
  stepNanos: number;
  /** The request's own output limit, if it set one. */
  ownMax: number | undefined;
}

interface Plan {
  charges: RateCharge[];
  /** Whose each charge is (for the warning). */
  scopes: ('key' | 'project')[];
  claims: SlotClaim[];
  budget: BudgetPlan | undefined;
  /** How long a slot or reservation lives if its request never settles. */
  holdMs: number;
}

interface Checked {
  rates: RateOutcome | undefined;
  slots: SlotOutcome | undefined;
  budget: ReserveOutcome | undefined;
}

/**
 * The output a non-streamed request's reservation pays for, when that is less than it asked (or
 * it asked no limit): its answer cannot be cut, so it must fit. Free models are not capped.
 */
function outputCap(budget: BudgetPlan | undefined, reserved: ReserveOutcome | undefined): number | undefined {
  if (!budget || !reserved?.ok || budget.outputNanosPerToken <= 0) return undefined;
  // The epsilon keeps a grant of exactly n tokens from rounding down to n - 1.
  const affordable = Math.max(1, Math.floor((reserved.granted - budget.inputNanos) / budget.outputNanosPerToken + 1e-9));
  return budget.ownMax !== undefined && budget.ownMax <= affordable ? undefined : affordable;
}

function spendOf(w: BudgetWindow, nanos: number): BudgetSpend {
  return { windowId: w.id, subject: w.subject, period: w.period, start: w.start, usd: nanos / NANOS_PER_USD };
}

function usd(nanos: number): string {
  return String(Number((nanos / NANOS_PER_USD).toFixed(6)));
}
