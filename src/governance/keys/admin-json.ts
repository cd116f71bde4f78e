import type { ApiKey, Endpoint, Project } from './governance-store.ts';
import { keyPrefix } from './key-format.ts';

/** Times as ISO 8601, like the request log. */
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function budgetsJson(day: number | null, month: number | null) {
  return { daily_usd: day, monthly_usd: month };
}

export function projectJson(p: Project): Record<string, unknown> {
  return {
    object: 'sluice.project',
    id: p.id,
    name: p.name,
    tier: p.tier,
    budgets: budgetsJson(p.budgetDayUsd, p.budgetMonthUsd),
    models: p.allowedModels,
    metadata: p.metadata,
    created_at: iso(p.createdAt),
    deleted_at: iso(p.deletedAt),
  };
}

/** What stops a key first, in that order (a deleted key may also have been revoked). */
function keyStatus(k: ApiKey, now: number): 'deleted' | 'revoked' | 'disabled' | 'expired' | 'active' {
  if (k.deletedAt !== null) return 'deleted';
  if (k.revokedAt !== null) return 'revoked';
  if (k.disabledAt !== null) return 'disabled';
  return k.expiresAt !== null && k.expiresAt <= now ? 'expired' : 'active';
}

/** A key as the admin API shows it: never the secret, never its hash. */
export function keyJson(k: ApiKey, now = Date.now()): Record<string, unknown> {
  const status = keyStatus(k, now);
  return {
    object: 'sluice.key',
    id: k.id,
    prefix: keyPrefix(k.id),
    name: k.name,
    project: k.projectId,
    tier: k.tier,
    models: k.allowedModels,
    budgets: budgetsJson(k.budgetDayUsd, k.budgetMonthUsd),
    admin: k.admin,
    status,
    created_at: iso(k.createdAt),
    expires_at: iso(k.expiresAt),
    revoked_at: iso(k.revokedAt),
    disabled_at: iso(k.disabledAt),
    deleted_at: iso(k.deletedAt),
    last_used_at: iso(k.lastUsedAt),
    previous_secret_valid_until: k.previousValidUntil !== null && k.previousValidUntil > now ? iso(k.previousValidUntil) : null,
  };
}

export function endpointJson(e: Endpoint): Record<string, unknown> {
  return {
    object: 'sluice.endpoint',
    project: e.projectId,
    name: e.name,
    model: e.model,
    stream_profile: e.streamProfile,
    usage: e.usage,
    error_style: e.errorStyle,
    vendor_events: e.vendorEvents,
    cache: e.cache,
    /** What a client puts in its SDK's base URL (after the gateway's origin). */
    base_path: `/${e.projectId}/${e.name}/v1`,
    created_at: iso(e.createdAt),
  };
}
