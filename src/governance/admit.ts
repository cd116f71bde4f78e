import type { Kysely } from 'kysely';
import type { RequestHolds } from '../accounting/journal-entries.ts';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { PricingRegistry } from '../accounting/pricing.ts';
import type { Config } from '../config/schema.ts';
import { errors } from '../errors/catalog.ts';
import type { Admission, AdmissionRequest, Admit, Caller } from '../admission/admission.ts';
import { estimatePromptTokens } from '../accounting/count-tokens.ts';
import type { Database } from '../store/database.ts';
import { type BudgetBook, MemoryBudgetBook } from './budgets/budget-book.ts';
import { BudgetGuard } from './budgets/budget-guard.ts';
import { type BudgetWindow, toNanos } from './budgets/budget-windows.ts';
import { RedisBudgetBook } from './budgets/redis-budget-book.ts';
import { outputCap } from './budgets/budget-ask.ts';
import { PriceBook } from './budgets/request-estimate.ts';
import { SpendLedger } from './budgets/spend-ledger.ts';
import { SpendStore } from './budgets/spend-store.ts';
import { MemorySlots, RedisSlots } from './limits/concurrency-slots.ts';
import { MemoryRateBuckets, type RateSettlement } from './limits/rate-buckets.ts';
import { RedisRateBuckets } from './limits/redis-rate-buckets.ts';
import { type RedisDownReason, RedisLink } from '../store/redis-link.ts';
import type { RedisEvents } from '../telemetry/metrics.ts';
import { TierBook, type TierPolicy } from './limits/tier-policy.ts';
import type { Bookkeeping, Books, LocalBooks } from './admit/books.ts';
import { type Checked, checkSomewhere } from './admit/check-charges.ts';
import { holdsOf } from './admit/journal-holds.ts';
import { limitHeaders, limitWarning } from './admit/limit-standing.ts';
import { type Plan, type PlanSettings, planCharges, requestAsk } from './admit/plan-charges.ts';
import { previewOf } from './admit/preview.ts';
import { refuseIfOver } from './admit/refusal.ts';
import { type Admitted, settleAdmission, settleInterrupted } from './admit/settle.ts';
import { tierTimes } from './admit/tier-times.ts';
import { SharedAdmissions } from './shared-admissions.ts';
import { type CallerUsage, usageOf } from './usage-report.ts';

export interface GovernanceDeps {
  pricing: PricingRegistry;
  log: (message: string) => void;
  now?: () => number;
  /** Counted in /metrics: Redis went away (why), and each request decided without it (by its tier's policy). */
  redisEvents?: RedisEvents;
}

const NOTHING_TO_SETTLE: Admission = { settle: () => {} };

/**
 * The admit step for tiers, limits and budgets (docs/governance/tiers-limits-budgets.md): every model
 * request is charged to its key's and project's per-minute token buckets (requests, and tokens with
 * the prompt's estimate), takes an in-flight slot and reserves its estimated cost in every budget
 * window, all at once (with Redis: one pipelined round trip), or is refused before any output.
 * Its settlement gives back the slot, reconciles the tokens with the real usage and turns the
 * reservation into the real cost. This class wires the steps of admit/: plan the charges, check
 * them against the books (Redis's, or this instance's), refuse, settle.
 */
export class LimitsAndBudgets {
  private tiers: TierBook;
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
  private planSettings: PlanSettings;
  /** What the check and the settlement reach: set once, so that an admission allocates none of it. */
  private readonly keeping: Bookkeeping;

  constructor(config: Config, deps: GovernanceDeps) {
    this.prefix = config.limits.redis_prefix;
    this.log = deps.log;
    this.now = deps.now ?? Date.now;
    this.tiers = new TierBook(config, deps.log);
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
    this.planSettings = planSettingsOf(config, deps.pricing);
    this.keeping = {
      local: this.local,
      link,
      shared: () => this.shared(),
      events: this.events,
      reconcileRates: (books, settlements) => this.reconcileRates(books, settlements),
      settleBudget: (books, windows, requestId, cost) => this.settleBudget(books, windows, requestId, cost),
      settledShared: (requestId) => this.inFlight.settled(requestId, this.local),
    };
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
    this.tiers = new TierBook(config, this.log);
    this.planSettings = planSettingsOf(config, pricing);
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
    if (req.dryRun) return this.dryRun(req, tier);
    if (!tier && req.caller.budgets.length === 0) return NOTHING_TO_SETTLE;
    return this.admitGoverned(req, tier);
  };

  /**
   * A dry run's admission (docs/api/dry-run.md): the same plan as a request's, with each limit
   * and budget read as the console's usage page reads them, so nothing is charged, no slot taken
   * and nothing reserved. The refusal the request would get is thrown; else the admission carries
   * the preview. Redis away: this instance's own books, as a fail_open tier is held to.
   */
  private async dryRun(req: AdmissionRequest, tier: TierPolicy | undefined): Promise<Admission> {
    const now = this.now();
    const plan = planCharges(req, tier, now, this.planSettings);
    const promptTokens = plan.promptTokens || (req.inputTokens ?? estimatePromptTokens(req.request));
    const reservationNanos = (plan.budget ?? requestAsk(req, promptTokens, this.planSettings)).want;
    const windows = plan.budget?.windows ?? [];
    const read = async (books: Books) =>
      Promise.all([
        plan.charges.length > 0 ? books.rates.peek(plan.charges, now) : [],
        plan.claims.length > 0 ? books.slots.inUse(plan.claims.map((c) => c.subject)) : [],
      ]);
    const link = this.link;
    const shared = link?.available() ? this.shared() : undefined;
    const [[rates, inUse], spent] = await Promise.all([
      link && shared ? link.run(() => read(shared)).catch(() => read(this.local)) : read(this.local),
      // What this instance knows of each window's spend: the store's, and its own not yet written.
      Promise.all(windows.map(async (w) => this.spend.spent(w))),
    ]);
    const standing = { rates, inUse, spentNanos: new Map(windows.map((w, i) => [w.id, spent[i]])) };
    const { preview, refusal } = previewOf(plan, tier?.name ?? null, standing, { promptTokens, reservationNanos }, now);
    if (refusal) throw refusal;
    return { preview, settle: () => {} };
  }

  private async admitGoverned(req: AdmissionRequest, tier: TierPolicy | undefined): Promise<Admission> {
    const { requestId } = req;
    const now = this.now();
    const plan = planCharges(req, tier, now, this.planSettings);
    const { books, checked } = await checkSomewhere(plan, requestId, now, tier, this.keeping);
    const headers = limitHeaders(plan, checked);
    refuseIfOver(plan, checked, headers, now);
    const maxOutputTokens =
      req.streamed || !plan.budget || !checked.budget?.ok ? undefined : outputCap(plan.budget, checked.budget.granted);
    const guard = req.streamed ? this.guard(plan, requestId, checked, books) : undefined;
    if (books.shared) this.holdShared(plan, requestId, checked, guard);
    const admitted: Admitted = { requestId, plan, tier, books, at: now, guard, capped: maxOutputTokens !== undefined };
    return {
      headers,
      ...tierTimes(tier),
      warning: limitWarning(plan, checked.rates),
      watch: guard?.watch,
      watchCost: guard && ((costUsd: number) => guard.watchCost(toNanos(costUsd))),
      maxOutputTokens,
      holds: holdsOf(plan, checked),
      settle: (record) => settleAdmission(admitted, record, this.keeping),
    };
  }

  /**
   * A request a crash cut short, recorded at the next start from the durable journal: what it
   * held is given back and its cost charged, as its settle would have (settle.ts).
   */
  settleInterrupted(holds: RequestHolds | undefined, record: LedgerRecord): LedgerRecord {
    return settleInterrupted(holds, record, this.keeping);
  }

  /**
   * Spend that arrives after its request was answered (a batch settled when it ends): added to
   * the budget windows' books (Redis's, or this instance's) as a settlement adds a request's cost;
   * its record carries the same spend to the store.
   */
  readonly chargeLate = (windows: readonly BudgetWindow[], requestId: string, costUsd: number): void => {
    const cost = toNanos(costUsd);
    if (cost > 0 && windows.length > 0) this.settleBudget(this.shared() ?? this.local, windows, requestId, cost);
  };

  /** A stream with a reservation: its guard extends it as the output grows, and stops the stream when it cannot. */
  private guard(plan: Plan, requestId: string, checked: Checked, books: Books): BudgetGuard | undefined {
    if (!plan.budget || !checked.budget?.ok) return undefined;
    return new BudgetGuard({
      book: books.extending,
      windows: plan.budget.windows,
      requestId,
      inputNanos: plan.budget.inputNanos,
      outputNanosPerToken: plan.budget.outputNanosPerToken,
      reserved: checked.budget.granted,
      stepNanos: plan.budget.stepNanos,
      ttlMs: plan.holdMs,
      log: this.log,
    });
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

  private settleBudget(books: Books, windows: readonly BudgetWindow[], requestId: string, cost: number): void {
    books.book.settle(windows, requestId, cost);
    // Admitted on this instance's book while Redis was away, settled now that it is back: the
    // shared mirror of the spend hears of it (while Redis is away, the seed sent after the outage
    // carries it, from the store).
    if (!books.shared && this.link?.client) this.redisBook?.mirror(windows, cost);
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

/** What planning a request reads of the config: prices, the output reserved, how long a hold lives without a tier deadline. */
function planSettingsOf(config: Config, pricing: PricingRegistry): PlanSettings {
  const longest = Math.max(config.stream.deadline_s, config.responses.deadline_s) * 1000;
  return {
    prices: new PriceBook(pricing),
    reserveOutputTokens: config.limits.reserve_output_tokens,
    defaultHoldMs: longest > 0 ? longest : 3_600_000,
  };
}
