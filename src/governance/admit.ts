import type { Kysely } from 'kysely';
import type { RequestHolds } from '../accounting/journal-entries.ts';
import type { BudgetSpend, LedgerRecord } from '../accounting/ledger-record.ts';
import { estimatePromptTokens } from '../accounting/count-tokens.ts';
import type { PricingRegistry } from '../accounting/pricing.ts';
import type { Config } from '../config/schema.ts';
import { errors } from '../errors/catalog.ts';
import type { Admission, AdmissionRequest, Admit, Caller, RateLimitWarning } from '../admission/admission.ts';
import type { Database } from '../store/database.ts';
import { type BudgetBook, MemoryBudgetBook, type ReserveOutcome } from './budgets/budget-book.ts';
import { BudgetGuard } from './budgets/budget-guard.ts';
import { type BudgetWindow, budgetWindows, NANOS_PER_USD, toNanos } from './budgets/budget-windows.ts';
import { RedisBudgetBook } from './budgets/redis-budget-book.ts';
import { type BudgetAsk, budgetAsk, outputCap, outputChoices } from './budgets/budget-ask.ts';
import { PriceBook } from './budgets/request-estimate.ts';
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
import { type RedisDownReason, RedisLink, RedisUnavailable } from '../store/redis-link.ts';
import type { RedisEvents } from '../telemetry/metrics.ts';
import { TierBook, type TierPolicy, tierDisplayName } from './limits/tier-policy.ts';
import { SharedAdmissions } from './shared-admissions.ts';
import { type CallerUsage, usageOf } from './usage-report.ts';

export interface GovernanceDeps {
  pricing: PricingRegistry;
  log: (message: string) => void;
  now?: () => number;
  /** Counted in /metrics: Redis went away (why), and each request decided without it (by its tier's policy). */
  redisEvents?: RedisEvents;
}

/** Where an admission's limits and budget are kept: in Redis for every instance, or in this one's memory. */
interface Books {
  rates: RateBuckets;
  slots: ConcurrencySlots;
  book: BudgetBook;
  /** What a running stream extends its reservation in: with Redis, within its timeout, as admissions. */
  extending: Pick<BudgetBook, 'extend'>;
  shared: boolean;
}

interface LocalBooks extends Books {
  rates: MemoryRateBuckets;
  slots: MemorySlots;
  book: MemoryBudgetBook;
  shared: false;
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
  private config: Config;
  private tiers: TierBook;
  private prices: PriceBook;
  private readonly log: (message: string) => void;
  private readonly now: () => number;
  private readonly link: RedisLink | undefined;
  private readonly prefix: string;
  private readonly spend: SpendLedger;
  private spendStore: SpendStore | undefined;
  /** This instance's own books: the only ones without Redis, the fallback while it is away. */
  private readonly local: LocalBooks;
  private readonly redisSlots: RedisSlots | undefined;
  private readonly redisBook: RedisBudgetBook | undefined;
  /** The shared books on the current Redis connection (the rate buckets are rebuilt after a reconnect). */
  private sharedBooks: { generation: number; books: Books } | undefined;
  private readonly inFlight = new SharedAdmissions();
  private readonly events: RedisEvents | undefined;
  private defaultHoldMs: number;

  constructor(config: Config, deps: GovernanceDeps) {
    this.config = config;
    this.prefix = config.limits.redis_prefix;
    this.log = deps.log;
    this.now = deps.now ?? Date.now;
    this.tiers = new TierBook(config, deps.log);
    this.prices = new PriceBook(deps.pricing);
    this.defaultHoldMs = holdMs(config);
    this.spend = new SpendLedger({ refreshMs: 1_000, log: deps.log, now: this.now });
    this.events = deps.redisEvents;
    const book = new MemoryBudgetBook(this.spend, this.now);
    this.local = { rates: new MemoryRateBuckets(), slots: new MemorySlots(), book, extending: book, shared: false };
    const redisUrl = config.limits.redis_url;
    // Redis only when something is shared through it: a gateway without tiers never connects.
    this.link =
      redisUrl && this.tiers.size > 0
        ? new RedisLink({
            url: redisUrl,
            timeoutMs: config.limits.redis_timeout_ms,
            log: (message) => deps.log(`limits: ${message}`),
            meaning: {
              down: "fail_open tiers are held to this instance's own limits and budgets, fail_closed tiers answer 503",
              up: 'limits and budgets are shared again',
            },
            onDown: (reason) => this.fellBack(reason),
            onUp: () => this.redisBook?.forget(),
          })
        : undefined;
    const link = this.link;
    if (link) {
      const client = () => link.client;
      const send = link.send.bind(link);
      this.redisSlots = new RedisSlots(client, this.prefix, send, this.now);
      this.redisBook = new RedisBudgetBook(client, this.prefix, this.spend, send, this.now);
    }
  }

  /**
   * Whether limits and budgets live in Redis: only when limits.redis_url was set and the config
   * had tiers at start (a gateway without tiers never connects).
   */
  get inRedis(): boolean {
    return this.link !== undefined;
  }

  /**
   * A reloaded config (server/reload-config.ts): its tiers, default tier, prices and output
   * reservation from the next request on. An admitted request keeps the tier and the plan it was
   * admitted with (its settlement closes over them); what the buckets, slots and budget books
   * hold stays, keyed by key and project, whatever their tier. The Redis settings are the
   * running ones (a restart changes them).
   */
  reconfigure(config: Config, pricing: PricingRegistry): void {
    this.config = config;
    this.tiers = new TierBook(config, this.log);
    this.prices = new PriceBook(pricing);
    this.defaultHoldMs = holdMs(config);
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
    const books = this.shared() ?? this.local;
    return usageOf(callers, {
      tierOf: (caller) => this.tiers.of(caller),
      rates: books.rates,
      slots: books.slots,
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
    const { books, checked } = await this.checkSomewhere(plan, requestId, now, tier);
    const headers = this.headers(plan, checked);
    this.refuseIfOver(plan, checked, headers, now);
    const maxOutputTokens =
      req.streamed || !plan.budget || !checked.budget?.ok ? undefined : outputCap(plan.budget, checked.budget.granted);

    const guard =
      req.streamed && plan.budget && checked.budget?.ok
        ? new BudgetGuard({
            book: books.extending,
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
    if (books.shared) this.holdShared(plan, requestId, checked, guard);
    return {
      headers,
      ...this.tierTimes(tier),
      warning: this.warning(plan, checked.rates),
      watch: guard?.watch,
      maxOutputTokens,
      holds: holdsOf(plan, checked),
      settle: (record) => this.settle(plan, requestId, tier, guard, now, record, maxOutputTokens !== undefined, books),
    };
  }

  /**
   * The check on the shared books while Redis answers, else on this instance's own (fail_open)
   * or none (fail_closed: 503). Redis's timeout counts Redis alone: a budget window's first
   * spend is read from the store before (that read once waited for the store's pool inside it,
   * and a burst on two instances timed out against a healthy Redis: issue 25).
   */
  private async checkSomewhere(
    plan: Plan,
    requestId: string,
    now: number,
    tier: TierPolicy | undefined,
  ): Promise<{ books: Books; checked: Checked }> {
    const link = this.link;
    if (!link) return { books: this.local, checked: await this.check(plan, requestId, now, this.local) };
    const shared = link.available() ? this.shared() : undefined;
    const readying = shared && plan.budget ? shared.book.ready?.(plan.budget.windows) : undefined;
    // A window's spend the store could not give cannot be checked in Redis either: as if Redis were away.
    if (
      shared &&
      (readying === undefined ||
        (await readying.then(
          () => true,
          () => false,
        )))
    ) {
      try {
        return { books: shared, checked: await link.run(() => this.check(plan, requestId, now, shared)) };
      } catch (err) {
        if (!(err instanceof RedisUnavailable)) throw err;
      }
    }
    this.events?.decidedLocally(tier?.redisUnavailable ?? 'fail_open');
    if (tier?.redisUnavailable === 'fail_closed') throw errors.limitsUnavailable();
    return { books: this.local, checked: await this.check(plan, requestId, now, this.local) };
  }

  /** An admission through Redis holding slots or a reservation there: adopted by the own books should Redis go away. */
  private holdShared(plan: Plan, requestId: string, checked: Checked, guard: BudgetGuard | undefined): void {
    const budget = checked.budget?.ok ? checked.budget : undefined;
    if (plan.claims.length === 0 && !budget) return;
    const granted = budget?.granted ?? 0;
    this.inFlight.add(requestId, {
      claims: plan.claims,
      windows: budget ? plan.budget?.windows : undefined,
      reserved: () => guard?.held ?? granted,
      ttlMs: plan.holdMs,
    });
  }

  /** Redis went away: this instance's books take over, counting what is in flight through Redis. */
  private fellBack(reason: RedisDownReason): void {
    this.inFlight.adoptInto(this.local);
    this.events?.fellBack(reason);
  }

  /** What this request asks of each limit and budget. */
  private plan(req: AdmissionRequest, tier: TierPolicy | undefined, now: number): Plan {
    const { caller, request, target } = req;
    const key = caller.keyId === null ? undefined : `key:${caller.keyId}`;
    const project = caller.projectId === null ? undefined : `project:${caller.projectId}`;
    const rules = tier && tier.budgets.length > 0 ? [...tier.budgets, ...caller.budgets] : caller.budgets;
    const windows = rules.length > 0 ? budgetWindows(rules, caller, now) : [];
    const needsTokens =
      windows.length > 0 || tier?.key.tokensPerMinute !== undefined || tier?.project.tokensPerMinute !== undefined;
    const promptTokens = needsTokens ? (req.inputTokens ?? estimatePromptTokens(request)) : 0;
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
    const budget: BudgetPlan | undefined =
      windows.length > 0
        ? {
            windows,
            ...budgetAsk(
              request,
              promptTokens,
              this.prices.of(target.provider, target.model),
              this.config.limits.reserve_output_tokens,
              // An embeddings answer is vectors: no output to reserve, nor to need room for.
              req.surface === 'embeddings' ? 0 : outputChoices(request),
            ),
          }
        : undefined;
    const holdMs = (tier?.deadlineMs || this.defaultHoldMs) + HOLD_MARGIN_MS;
    return { charges, scopes, claims, budget, holdMs, promptTokens };
  }

  /** Every limit and the budget at once; what one refused is given back by the others. */
  private async check(plan: Plan, requestId: string, now: number, books: Books): Promise<Checked> {
    // Issued in one tick: with Redis, every command of the admission leaves in one write.
    const rates = plan.charges.length > 0 ? books.rates.consume(plan.charges, now) : undefined;
    const slots = plan.claims.length > 0 ? books.slots.acquire(plan.claims, requestId, plan.holdMs) : undefined;
    const budget = plan.budget
      ? books.book.reserve(plan.budget.windows, requestId, plan.budget.want, plan.budget.min, plan.holdMs)
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
      if (checked.rates?.ok)
        this.reconcileRates(
          books,
          plan.charges.map((charge) => ({ charge, used: 0, chargedAt: now })),
        );
      if (checked.slots?.ok) books.slots.release(plan.claims, requestId);
      if (plan.budget && checked.budget?.ok) books.book.settle(plan.budget.windows, requestId, 0);
      // With Redis, the link turns any failure into RedisUnavailable (the tier's policy applies).
      if (failed) throw failed.reason;
    }
    return checked;
  }

  /** Throws the refusal, the budget's first (it does not pass with a retry), with the limit headers. */
  private refuseIfOver(plan: Plan, checked: Checked, headers: Record<string, string>, now: number): void {
    const budget = checked.budget;
    if (budget && !budget.ok && plan.budget) {
      throw errors.quotaExceeded(quotaMessage(budget, plan.budget.min), {
        ...headers,
        ...retryAfterHeaders(budget.window.end - now),
      });
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
    books: Books,
  ): LedgerRecord | void {
    if (plan.claims.length > 0) books.slots.release(plan.claims, requestId);
    const used = record.inputTokens + record.outputTokens;
    const tokens = plan.charges.filter((c) => c.kind === 'tokens' && c.points !== used);
    if (tokens.length > 0)
      this.reconcileRates(
        books,
        tokens.map((charge) => ({ charge, used, chargedAt: admittedAt })),
      );
    const voided = tier?.abandoned === 'void' && record.outcome === 'cancelled';
    const cost = voided ? 0 : toNanos(record.costUsd);
    if (plan.budget) this.settleBudget(books, plan.budget.windows, requestId, cost);
    if (books.shared) this.inFlight.settled(requestId, this.local);
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

  private settleBudget(books: Books, windows: readonly BudgetWindow[], requestId: string, cost: number): void {
    books.book.settle(windows, requestId, cost);
    // Admitted on this instance's book while Redis was away, settled now that it is back: the
    // shared mirror of the spend hears of it (while Redis is away, the seed sent after the outage
    // carries it, from the store).
    if (!books.shared && this.link?.client) this.redisBook?.mirror(windows, cost);
  }

  /**
   * A request that was running when sluice stopped without a drain, recorded at the next start
   * from the durable journal (pipeline/record-interrupted.ts): what it held is given back and its
   * cost charged, as its settle would have. In Redis its slots and its reservation are released at
   * once (they would otherwise lapse only at their expiry, the deadline plus a minute); in memory a
   * new process holds neither (and MemorySlots counts per subject: a release would free a live
   * request's slot), so only the spend is added. The per-minute token charge is left as it was:
   * its minute is past. Returns the record with its spend, written in the row's transaction.
   */
  settleInterrupted(holds: RequestHolds | undefined, record: LedgerRecord): LedgerRecord {
    if (!holds) return record;
    // Redis away at recovery: its slots and reservation lapse at their expiry; the spend still counts.
    const shared = this.shared();
    if (shared && holds.slots && holds.slots.length > 0) shared.slots.release(holds.slots, record.requestId);
    const windows = holds.budget?.windows;
    if (!windows || windows.length === 0) return record;
    const cost = toNanos(record.costUsd);
    this.settleBudget(shared ?? this.local, windows, record.requestId, cost);
    return cost > 0 ? { ...record, budgetSpend: windows.map((w) => spendOf(w, cost)) } : record;
  }

  /** Charges given back or reconciled with the real usage: one script in Redis, fire and forget. */
  private reconcileRates(books: Books, settlements: RateSettlement[]): void {
    if (!books.shared) this.local.rates.reconcile(settlements, this.now());
    else this.link?.send('reconcile the per-minute limits', async () => this.shared()?.rates.reconcile(settlements, this.now()));
  }

  /** The shared books on the current Redis connection (the rate buckets rebuilt after a reconnect); undefined while Redis is away. */
  private shared(): Books | undefined {
    const link = this.link;
    const client = link?.client;
    if (!link || !client || !this.redisSlots || !this.redisBook) return undefined;
    if (this.sharedBooks?.generation !== link.generation) {
      const rates = new RedisRateBuckets(client, this.prefix);
      const book = this.redisBook;
      // A stream near its reservation waits for this answer: a slow Redis must not hold it longer than an admission.
      const extending = { extend: (...args: Parameters<BudgetBook['extend']>) => link.run(() => book.extend(...args)) };
      this.sharedBooks = {
        generation: link.generation,
        books: { rates, slots: this.redisSlots, book, extending, shared: true },
      };
    }
    return this.sharedBooks.books;
  }
}

/** How long a reservation or a slot of a request without a tier deadline is held: the longest deadline. */
function holdMs(config: Config): number {
  const longest = Math.max(config.stream.deadline_s, config.responses.deadline_s) * 1000;
  return longest > 0 ? longest : 3_600_000;
}

/** A request's ask of its budget windows. */
interface BudgetPlan extends BudgetAsk {
  windows: BudgetWindow[];
}

interface Plan {
  charges: RateCharge[];
  /** Whose each charge is (for the warning). */
  scopes: ('key' | 'project')[];
  claims: SlotClaim[];
  budget: BudgetPlan | undefined;
  /** How long a slot or reservation lives if its request never settles. */
  holdMs: number;
  /** The prompt's estimate, when a limit or budget needed it (else 0: an estimate is at least 3). */
  promptTokens: number;
}

interface Checked {
  rates: RateOutcome | undefined;
  slots: SlotOutcome | undefined;
  budget: ReserveOutcome | undefined;
}

/** What an admitted request holds, as the durable journal keeps it (RequestHolds). */
function holdsOf(plan: Plan, checked: Checked): RequestHolds | undefined {
  const budget =
    plan.budget && checked.budget?.ok ? { windows: plan.budget.windows, reservedNanos: checked.budget.granted } : undefined;
  const slots = checked.slots?.ok && plan.claims.length > 0 ? plan.claims : undefined;
  const promptTokens = plan.promptTokens > 0 ? plan.promptTokens : undefined;
  if (!budget && !slots && promptTokens === undefined) return undefined;
  return { budget, slots, promptTokens };
}

/**
 * Why a budget refused a request: it is used up, or what it has left is less than the request's
 * least cost (its prompt and one output token per choice), which a smaller request may still fit.
 */
function quotaMessage(refused: Extract<ReserveOutcome, { ok: false }>, minNanos: number): string {
  const w = refused.window;
  const held = refused.reservedNanos > 0 ? `, $${usd(refused.reservedNanos)} held by requests in progress` : '';
  const budget = `the ${w.period === 'day' ? 'daily' : 'monthly'} budget of $${usd(w.limitNanos)} of ${w.subject.replace(':', ' ')}`;
  const leftNanos = w.limitNanos - refused.spentNanos - refused.reservedNanos;
  const state =
    leftNanos > 0
      ? `has $${usd(leftNanos)} left ($${usd(refused.spentNanos)} spent${held}), less than this request's least cost of $${usd(minNanos)} (its prompt and one output token per choice)`
      : `is used up ($${usd(refused.spentNanos)} spent${held})`;
  return `You exceeded your current quota: ${budget} ${state}. It resets at ${new Date(w.end).toISOString()}.`;
}

function spendOf(w: BudgetWindow, nanos: number): BudgetSpend {
  return { windowId: w.id, subject: w.subject, period: w.period, start: w.start, usd: nanos / NANOS_PER_USD };
}

function usd(nanos: number): string {
  return String(Number((nanos / NANOS_PER_USD).toFixed(6)));
}
