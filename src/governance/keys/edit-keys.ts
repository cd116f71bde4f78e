import { errors } from '../../errors/catalog.ts';
import type { UpdateKey } from './admin-requests.ts';
import type { ApiKey, KeyChanges } from './governance-store.ts';
import { type Change, checkTier, type ManageDeps, nowOf, requireKey } from './manage-keys.ts';

/** A PATCH body as the store's changes: given fields replace, null clears, absent ones are kept. */
export function keyChanges(
  input: UpdateKey,
  current: ApiKey,
  now: number,
  checkTier: (tier: string) => string | null,
): KeyChanges {
  const changes: KeyChanges = {};
  if (input.name !== undefined) changes.name = input.name;
  if (input.tier !== undefined) changes.tier = input.tier === null ? null : checkTier(input.tier);
  if (input.models !== undefined) changes.allowedModels = input.models;
  if (input.budgets?.daily_usd !== undefined) changes.budgetDayUsd = input.budgets.daily_usd;
  if (input.budgets?.monthly_usd !== undefined) changes.budgetMonthUsd = input.budgets.monthly_usd;
  if (input.expires_at !== undefined) changes.expiresAt = input.expires_at === null ? null : Date.parse(input.expires_at);
  if (input.expires_in_s !== undefined) changes.expiresAt = now + input.expires_in_s * 1000;
  // Disabling a disabled key keeps the time it was first disabled.
  if (input.disabled !== undefined) changes.disabledAt = input.disabled ? (current.disabledAt ?? now) : null;
  return changes;
}

/**
 * Edits a key (its name, tier, models, budgets, expiry; disables or enables it): at once on this
 * instance, within a second on the others (the announcement).
 */
export async function updateKey(deps: ManageDeps, id: string, input: UpdateKey): Promise<Change<ApiKey>> {
  const before = await requireKey(deps, id);
  const changes = keyChanges(input, before, nowOf(deps), (tier) => checkTier(deps, tier));
  const updated = await deps.governance.withStore((store) => store.updateKey(id, changes));
  deps.governance.announce({ kind: 'key', id });
  if (!updated) throw errors.notFound('key', id, 'key_id');
  return { before, after: await requireKeyRow(deps, id) };
}

/**
 * Deletes a key softly: it is refused like an unknown key (401) everywhere within a second and
 * leaves the default listings, while its ledger rows, request log and spend stay its own.
 */
export async function deleteKey(deps: ManageDeps, id: string): Promise<Change<ApiKey>> {
  const before = await requireKey(deps, id);
  const deleted = await deps.governance.withStore((store) => store.deleteKey(id, nowOf(deps)));
  deps.governance.announce({ kind: 'key', id });
  if (!deleted) throw errors.notFound('key', id, 'key_id');
  return { before, after: await requireKeyRow(deps, id) };
}

/** The row as stored, deleted or not: what a change left behind. */
async function requireKeyRow(deps: ManageDeps, id: string): Promise<ApiKey> {
  const key = await deps.governance.withStore((store) => store.getKey(id));
  if (!key) throw errors.notFound('key', id, 'key_id');
  return key;
}
