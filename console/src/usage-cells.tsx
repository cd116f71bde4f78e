import { formatUsd } from './api.ts';
import type { Budgets } from './admin-types.ts';

/** GET /console/api/usage: what each usable key and each project is held to, and how much is in use now. */
interface Usage {
  tier: string | null;
  /** A budget of its (or its project's) has nothing left: every request is refused until it resets. */
  blocked: boolean;
  limits: {
    scope: 'key' | 'project';
    kind: 'requests' | 'tokens' | 'concurrent';
    limit: number;
    used: number;
    reset_ms: number;
  }[];
  budgets: {
    scope: 'key' | 'project';
    period: 'day' | 'month';
    limit_usd: number;
    spent_usd: number;
    exhausted: boolean;
    resets_at: string;
  }[];
}
export interface UsageReport {
  keys: Record<string, Usage>;
  projects: Record<string, Usage>;
}

const KIND = { requests: 'requests/min', tokens: 'tokens/min', concurrent: 'in flight' } as const;

/** The limits with what is used of each: a meter and the numbers, named by scope so that a screen reader says which. */
export function LimitsCell({ usage }: { usage: Usage | undefined }) {
  if (!usage || usage.limits.length === 0) return <>{usage?.tier ? `${usage.tier}: none` : '–'}</>;
  return (
    <ul className="usage">
      {usage.limits.map((l) => {
        const name = `${KIND[l.kind]} (${l.scope})`;
        return (
          <li key={`${l.scope}-${l.kind}`}>
            <span>
              {name}: {l.used} of {l.limit}
            </span>
            <meter min={0} max={l.limit} high={l.limit * 0.9} value={l.used} aria-label={name} />
          </li>
        );
      })}
    </ul>
  );
}

export function BudgetsCell({ usage, configured }: { usage: Usage | undefined; configured: Budgets }) {
  if (!usage) return <>{budgetText(configured)}</>;
  if (usage.budgets.length === 0) return <>–</>;
  return (
    <ul className="usage">
      {usage.budgets.map((b) => {
        const name = `${b.period === 'day' ? 'today' : 'this month'} (${b.scope})`;
        return (
          <li key={`${b.scope}-${b.period}`}>
            <span title={`resets at ${new Date(b.resets_at).toLocaleString()}`}>
              {name}: {formatUsd(b.spent_usd)} of {formatUsd(b.limit_usd)}
              {b.exhausted && <strong className="blocked"> exhausted</strong>}
            </span>
            <meter min={0} max={b.limit_usd} high={b.limit_usd * 0.9} value={b.spent_usd} aria-label={`spent ${name}`} />
          </li>
        );
      })}
    </ul>
  );
}

/**
 * The status the admin API gives, or blocked when a budget is spent: the key (or project) is
 * active but every request of it is refused until the budget resets.
 */
export function StatusCell({ status, usage }: { status: string; usage: Usage | undefined }) {
  if (status !== 'active' || !usage?.blocked) return <>{status}</>;
  const spent = usage.budgets.find((b) => b.exhausted);
  const until = spent
    ? `until ${new Date(spent.resets_at).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' })}`
    : '';
  return (
    <strong className="blocked" title={until}>
      blocked (budget exhausted)
    </strong>
  );
}

function budgetText(b: Budgets): string {
  const parts = [b.daily_usd !== null && `$${b.daily_usd}/day`, b.monthly_usd !== null && `$${b.monthly_usd}/month`];
  return parts.filter(Boolean).join(', ') || '–';
}
