import { errors } from '../../errors/catalog.ts';
import type { UpdateProject } from './admin-requests.ts';
import type { Project, ProjectChanges } from './governance-store.ts';
import { type Change, checkTier, type ManageDeps, nowOf, requireProject } from './manage-keys.ts';

/** A PATCH body as the store's changes: given fields replace, null clears, absent ones are kept. */
export function projectChanges(input: UpdateProject, checkTier: (tier: string) => string | null): ProjectChanges {
  const changes: ProjectChanges = {};
  if (input.name !== undefined) changes.name = input.name;
  if (input.tier !== undefined) changes.tier = input.tier === null ? null : checkTier(input.tier);
  if (input.budgets?.daily_usd !== undefined) changes.budgetDayUsd = input.budgets.daily_usd;
  if (input.budgets?.monthly_usd !== undefined) changes.budgetMonthUsd = input.budgets.monthly_usd;
  if (input.models !== undefined) changes.allowedModels = input.models;
  if (input.metadata !== undefined) changes.metadata = input.metadata;
  return changes;
}

/**
 * Edits a project (name, tier, budgets, models, metadata). Its keys carry its tier, budgets and
 * models, so every instance forgets them (the announcement) and reads them again.
 */
export async function updateProject(deps: ManageDeps, id: string, input: UpdateProject): Promise<Change<Project>> {
  const before = await requireProject(deps, id);
  const changes = projectChanges(input, (tier) => checkTier(deps, tier));
  const updated = await deps.governance.withStore((store) => store.updateProject(id, changes));
  deps.governance.announce({ kind: 'project', id });
  if (!updated) throw errors.notFound('project', id, 'project');
  return { before, after: await requireProject(deps, id) };
}

/**
 * Deletes a project softly. One that still has live keys (neither revoked nor deleted) is a 409
 * naming them unless `force`, which deletes its keys with it: a deletion never leaves a key that
 * works in a project nobody lists. Its endpoints go for good; its id stays taken, so that its
 * ledger rows and spend never become another project's.
 */
export async function deleteProject(
  deps: ManageDeps,
  id: string,
  force: boolean,
): Promise<Change<Project> & { deletedKeys: string[] }> {
  const before = await requireProject(deps, id);
  const live = await deps.governance.withStore((store) => store.liveKeyIds(id));
  if (live.length > 0 && !force) throw errors.projectHasKeys(id, live.length);
  const deleted = await deps.governance.withStore((store) => store.deleteProject(id, nowOf(deps)));
  deps.governance.announce({ kind: 'project', id });
  if (!deleted) throw errors.notFound('project', id, 'project');
  const after = await deps.governance.withStore((store) => store.getProject(id));
  if (!after) throw errors.notFound('project', id, 'project');
  return { before, after, deletedKeys: live };
}
