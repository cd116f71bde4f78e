import type { Caller } from '../../admission/admission.ts';
import { errors } from '../../errors/catalog.ts';
import type { ApiKey } from '../../governance/keys/governance-store.ts';
import type { Governance } from '../../governance/keys/governance.ts';
import { roleOf, seesProject, visibleProjects } from '../../governance/users/access.ts';

/**
 * What a project member may do in the admin API, beyond its route's permission: its own
 * projects' keys only (another project's are 404s, as a project key's are elsewhere), and never
 * an admin key (issuing or rotating one would hand the member more than its role).
 */

/** The admin API's lists as the caller sees them: a member's projects' things only. */
export function visibleTo<T>(caller: Caller | null, items: readonly T[], projectOf: (item: T) => string): T[] {
  const visible = caller ? visibleProjects(caller) : undefined;
  return visible === undefined ? [...items] : items.filter((item) => visible.includes(projectOf(item)));
}

/** POST /admin/keys: a member issues keys in its projects, and no admin key. */
export function checkNewKey(caller: Caller | null, project: string, admin: boolean | undefined): void {
  if (!caller) return;
  if (!seesProject(caller, project)) throw errors.notFound('project', project, 'project');
  if (admin) refuseAdminKey(caller);
}

/** Revoking or rotating a key: a member's projects' keys only, and no admin key. */
export async function checkKeyChange(caller: Caller | null, governance: Governance, keyId: string): Promise<void> {
  if (!caller || visibleProjects(caller) === undefined) return;
  const key: ApiKey | undefined = await governance.withStore((store) => store.getKey(keyId));
  if (!key || !seesProject(caller, key.projectId)) throw errors.notFound('key', keyId, 'key_id');
  if (key.admin) refuseAdminKey(caller);
}

function refuseAdminKey(caller: Caller): void {
  const role = roleOf(caller);
  if (role !== 'owner' && role !== 'admin') throw errors.roleRequired('admin', role ?? 'none');
}
