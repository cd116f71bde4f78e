import type { BudgetBook } from './budget-book.ts';
import type { BudgetWindow } from './budget-windows.ts';

export interface BudgetGuardInit {
  /** Where the reservation grows (with Redis: within its timeout, admit.ts). */
  book: Pick<BudgetBook, 'extend'>;
  windows: readonly BudgetWindow[];
  requestId: string;
  /** The prompt's estimated cost (nano-dollars). */
  inputNanos: number;
  outputNanosPerToken: number;
  /** What admission reserved. */
  reserved: number;
  /** How much more to ask for each time the stream nears its reservation. */
  stepNanos: number;
  ttlMs: number;
  log: (message: string) => void;
}

/** Past this share of its reservation, a stream asks for more (ahead of need, so it rarely waits). */
const EXTEND_AT = 0.8;

/**
 * Holds a running stream to its budget: asked once per upstream read with the output so far, it
 * estimates the stream's cost (the prompt, plus one token per 4 bytes of output, the estimate of
 * accounting/estimate-tokens.ts) and, near the reservation, extends it. The stream is stopped only
 * when its cost would pass a reservation that could not grow: then every reservation of every
 * instance plus the spend stays within the budget. The usual call is a multiply and a compare,
 * synchronous; it returns a promise only while an extension it needs is in flight.
 */
export class BudgetGuard {
  private readonly init: BudgetGuardInit;
  private reserved: number;
  private extending: Promise<void> | undefined;
  /** The book has said no more: the reservation is final. */
  private exhausted = false;
  /** The stream was stopped for its budget (the ledger row says budget_exhausted). */
  stopped = false;

  constructor(init: BudgetGuardInit) {
    this.init = init;
    this.reserved = init.reserved;
  }

  /** What the stream holds reserved now (admission's reservation and its extensions). */
  get held(): number {
    return this.reserved;
  }

  /** True: the output so far has spent this stream's share of the budget; end it now. */
  readonly watch = (outputBytes: number): boolean | Promise<boolean> =>
    this.judge(this.init.inputNanos + Math.ceil(outputBytes / 4) * this.init.outputNanosPerToken);

  /** True: a session's real cost so far (nano-dollars; a Realtime session's priced responses) is past what it may spend. */
  readonly watchCost = (costNanos: number): boolean | Promise<boolean> => this.judge(costNanos);

  private judge(cost: number): boolean | Promise<boolean> {
    if (this.exhausted || cost <= this.reserved * EXTEND_AT) return this.verdict(cost);
    this.extending ??= this.extend();
    if (cost <= this.reserved) return false;
    return this.extending.then(() => this.verdict(cost));
  }

  private verdict(cost: number): boolean {
    if (cost > this.reserved) this.stopped = true;
    return this.stopped;
  }

  private async extend(): Promise<void> {
    const { book, windows, requestId, stepNanos, ttlMs } = this.init;
    try {
      const more = await book.extend(windows, requestId, stepNanos, ttlMs);
      this.reserved += more;
      if (more < stepNanos) this.exhausted = true;
    } catch (err) {
      // The book is unreachable: the stream keeps what it holds and stops at its edge.
      this.init.log(`budgets: could not extend the reservation of ${requestId}: ${(err as Error).message}`);
      this.exhausted = true;
    } finally {
      this.extending = undefined;
    }
  }
}
