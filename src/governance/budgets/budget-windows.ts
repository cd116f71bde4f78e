import type { BudgetRule } from '../limits/tier-policy.ts';

/** Money in the budget books: integer nano-dollars, so sums are exact in JavaScript, Lua and Redis. */
export const NANOS_PER_USD = 1e9;

export const toNanos = (usd: number): number => Math.round(usd * NANOS_PER_USD);

/**
 * A window with nothing left in it: every request of its subject is refused, a free model's
 * included (a request's minimum ask is at least one nano-dollar: budget-ask.ts).
 */
export const windowExhausted = (limitNanos: number, spentUsd: number): boolean => toNanos(spentUsd) >= limitNanos;

/** One budget over one calendar period of one subject, e.g. key k1's spend on 2026-11-24 (UTC). */
export interface BudgetWindow {
  /** `key:k1:day:2026-11-24`: the same text on every instance, so the books agree. */
  id: string;
  subject: string;
  period: 'day' | 'month';
  /** Epoch ms of the period's start (UTC) and of the next period's. */
  start: number;
  end: number;
  limitNanos: number;
}

export interface BudgetOwner {
  keyId: string | null;
  projectId: string | null;
}

/**
 * The windows a request is held to: every rule whose subject the caller has (a key rule needs a
 * key, a project rule a project), at `now`. Two rules on the same subject and period (the tier's
 * and the key's own) are one window with the lower limit.
 */
export function budgetWindows(rules: readonly BudgetRule[], owner: BudgetOwner, now: number): BudgetWindow[] {
  const windows: BudgetWindow[] = [];
  for (const rule of rules) {
    const id = rule.scope === 'key' ? owner.keyId : owner.projectId;
    if (id === null) continue;
    const subject = `${rule.scope}:${id}`;
    const { start, end, label } = periodAt(rule.period, now);
    const windowId = `${subject}:${rule.period}:${label}`;
    const limitNanos = toNanos(rule.limitUsd);
    const same = windows.find((w) => w.id === windowId);
    if (same) same.limitNanos = Math.min(same.limitNanos, limitNanos);
    else windows.push({ id: windowId, subject, period: rule.period, start, end, limitNanos });
  }
  return windows;
}

/** The calendar day or month (UTC) holding `now`. */
export function periodAt(period: 'day' | 'month', now: number): { start: number; end: number; label: string } {
  const d = new Date(now);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  if (period === 'month') {
    return { start: Date.UTC(y, m, 1), end: Date.UTC(y, m + 1, 1), label: `${y}-${pad(m + 1)}` };
  }
  const day = d.getUTCDate();
  return { start: Date.UTC(y, m, day), end: Date.UTC(y, m, day + 1), label: `${y}-${pad(m + 1)}-${pad(day)}` };
}

const pad = (n: number): string => String(n).padStart(2, '0');
