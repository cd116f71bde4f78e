import { verifiedKey } from '../governance/keys/authenticate.ts';
import type { Project } from '../governance/keys/governance-store.ts';
import type { CallerUsage } from '../governance/usage-report.ts';
import type { Budget, Caller } from '../admission/admission.ts';
import { sendJson } from '../protocol/http/send-json.ts';
import type { ConsoleCall } from './console-call.ts';

/**
 * GET /console/api/usage: for every usable key and every project, the tier that applies, its
 * per-minute and in-flight limits with what is in use now, and its budgets with the spend of the
 * current day and month (the keys page). A key is shown as a request of it would be admitted:
 * its own and its project's limits and budgets, under its tier. Revoked and expired keys are left
 * out: nothing of theirs is admitted any more.
 */
export async function handleUsage({ res, ctx, requestId }: ConsoleCall): Promise<void> {
  const [projects, keys] = await ctx.governance.withStore((store) => Promise.all([store.listProjects(), store.listKeys()]));
  const defaultTier = ctx.config.default_tier ?? null;
  const byId = new Map(projects.map((p) => [p.id, p]));
  const now = Date.now();
  const usable = keys.filter((k) => k.revokedAt === null && (k.expiresAt === null || k.expiresAt > now) && byId.has(k.projectId));
  const callers = [
    ...usable.map((k) => verifiedKey(k, byId.get(k.projectId)!, defaultTier).caller),
    ...projects.map((p) => projectCaller(p, defaultTier)),
  ];
  const usage = await ctx.limits.usage(callers);
  sendJson(
    res,
    200,
    {
      object: 'sluice.console_usage',
      keys: Object.fromEntries(usable.map((k, i) => [k.id, usageJson(usage[i])])),
      projects: Object.fromEntries(projects.map((p, i) => [p.id, usageJson(usage[usable.length + i])])),
    },
    { 'X-Request-ID': requestId, 'Cache-Control': 'no-store' },
  );
}

/** The project on its own: its tier's project limits and budgets, and its own budgets (no key's). */
function projectCaller(p: Project, defaultTier: string | null): Caller {
  const budgets: Budget[] = [];
  if (p.budgetDayUsd !== null) budgets.push({ scope: 'project', period: 'day', limitUsd: p.budgetDayUsd });
  if (p.budgetMonthUsd !== null) budgets.push({ scope: 'project', period: 'month', limitUsd: p.budgetMonthUsd });
  return { keyId: null, projectId: p.id, tier: p.tier ?? defaultTier, allowedModels: null, admin: false, budgets };
}

function usageJson(u: CallerUsage): Record<string, unknown> {
  return {
    tier: u.tier,
    // A budget with nothing left refuses every request: the key or project is blocked until it resets.
    blocked: u.budgets.some((b) => b.exhausted),
    limits: u.limits.map((l) => ({ scope: l.scope, kind: l.kind, limit: l.limit, used: l.used, reset_ms: l.resetMs })),
    budgets: u.budgets.map((b) => ({
      scope: b.scope,
      period: b.period,
      limit_usd: b.limitUsd,
      spent_usd: b.spentUsd,
      exhausted: b.exhausted,
      resets_at: new Date(b.resetsAt).toISOString(),
    })),
  };
}
