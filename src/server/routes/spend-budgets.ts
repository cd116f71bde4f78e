import type { Caller } from '../../admission/admission.ts';
import { projectCaller } from '../../console/usage.ts';
import { verifiedKey } from '../../governance/keys/authenticate.ts';
import { readableProjects } from '../../governance/keys/project-scope.ts';
import type { BudgetUsage } from '../../governance/usage-report.ts';
import { sendJson } from '../../protocol/http/send-json.ts';
import type { RouteCall } from '../route-table.ts';

/** One budget's burn-down: its window's spend so far against its limit. */
export interface BurnDown {
  scope: 'key' | 'project';
  id: string;
  name: string | null;
  project_id: string;
  period: 'day' | 'month';
  limit_usd: number;
  spent_usd: number;
  remaining_usd: number;
  window_start: string;
  resets_at: string;
  /** The share of the window gone by (0 to 1). */
  elapsed: number;
  /** The spend at the window's end if it goes on at the pace so far (null at the window's first instant). */
  projected_usd: number | null;
}

/**
 * GET /v1/spend/budgets: every budget of every usable key and project (a project key: its own
 * project's and its keys'), the spend of its current window (the store's budget spend, what
 * admission holds requests to) against its limit, and where that pace ends.
 */
export async function handleSpendBudgets({ res, ctx, requestId, caller }: RouteCall): Promise<void> {
  const visible = readableProjects(caller);
  const [projects, keys] = await ctx.governance.withStore((s) => Promise.all([s.listProjects(), s.listKeys()]));
  const now = Date.now();
  const seen = projects.filter((p) => visible === undefined || visible.includes(p.id));
  const byId = new Map(seen.map((p) => [p.id, p]));
  const usable = keys.filter((k) => k.revokedAt === null && (k.expiresAt === null || k.expiresAt > now) && byId.has(k.projectId));
  const defaultTier = ctx.config.default_tier ?? null;
  const subjects: { scope: 'key' | 'project'; id: string; name: string | null; projectId: string; caller: Caller }[] = [
    ...usable.map((k) => ({
      scope: 'key' as const,
      id: k.id,
      name: k.name,
      projectId: k.projectId,
      caller: verifiedKey(k, byId.get(k.projectId)!, defaultTier).caller,
    })),
    ...seen.map((p) => ({
      scope: 'project' as const,
      id: p.id,
      name: p.name,
      projectId: p.id,
      caller: projectCaller(p, defaultTier),
    })),
  ];
  const usage = await ctx.limits.usage(subjects.map((s) => s.caller));
  const data = subjects.flatMap((s, i) =>
    // A key's caller carries its project's budgets too: those are the project's line.
    usage[i].budgets.filter((b) => b.scope === s.scope).map((b) => burnDown(s, b, now)),
  );
  sendJson(res, 200, { object: 'list', data }, { 'X-Request-ID': requestId, 'Cache-Control': 'no-store' });
}

const DAY = 86_400_000;

function burnDown(
  s: { scope: 'key' | 'project'; id: string; name: string | null; projectId: string },
  b: BudgetUsage,
  now: number,
): BurnDown {
  const start = b.period === 'day' ? b.resetsAt - DAY : monthStart(b.resetsAt - 1);
  const elapsed = Math.min(1, Math.max(0, (now - start) / (b.resetsAt - start)));
  return {
    scope: s.scope,
    id: s.id,
    name: s.name,
    project_id: s.projectId,
    period: b.period,
    limit_usd: b.limitUsd,
    spent_usd: b.spentUsd,
    remaining_usd: Math.max(0, b.limitUsd - b.spentUsd),
    window_start: new Date(start).toISOString(),
    resets_at: new Date(b.resetsAt).toISOString(),
    elapsed,
    projected_usd: elapsed > 0 ? b.spentUsd / elapsed : null,
  };
}

function monthStart(t: number): number {
  const d = new Date(t);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}
