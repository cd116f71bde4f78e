import type { Caller, Role } from '../../admission/admission.ts';
import { errors } from '../../errors/catalog.ts';

/**
 * What a route asks of its caller: `read` (any role), `keys` (issue, revoke and rotate keys: an
 * admin, or a member within its projects), `manage` (projects, endpoints, reload) and `users`.
 */
export type Permission = 'read' | 'keys' | 'manage' | 'users';

/** The least role each permission needs, as the 403 names it. */
const NEEDED: Record<Permission, Role> = { read: 'viewer', keys: 'admin', manage: 'admin', users: 'owner' };

const ALLOWED: Record<Role, readonly Permission[]> = {
  owner: ['read', 'keys', 'manage', 'users'],
  admin: ['read', 'keys', 'manage'],
  viewer: ['read'],
  member: ['read', 'keys'],
};

/**
 * The caller's role: a signed-in user's own; the master key (and a keyless gateway's anyone) is
 * the owner; an admin key an admin (automation keeps what it had, but not the users); a project
 * key has none.
 */
export function roleOf(caller: Caller): Role | undefined {
  if (caller.user) return caller.user.role;
  if (!caller.admin) return undefined;
  return caller.keyId === null ? 'owner' : 'admin';
}

/** Throws the 403 naming the role needed when the caller's role does not grant `permission`. */
export function requirePermission(caller: Caller, permission: Permission): void {
  const role = roleOf(caller);
  if (role && ALLOWED[role].includes(permission)) return;
  throw role ? errors.roleRequired(NEEDED[permission], role) : errors.adminRequired();
}

/**
 * The projects whose keys, requests and spend the caller may see: undefined for every project
 * (the owner, admins and viewers, the master key and admin keys), a member's projects, a project
 * key's own project.
 */
export function visibleProjects(caller: Caller): readonly string[] | undefined {
  if (caller.user) return caller.user.role === 'member' ? caller.user.projects : undefined;
  if (caller.admin) return undefined;
  return caller.projectId === null ? undefined : [caller.projectId];
}

/** Whether a project's things are the caller's to see: another project's are 404s, as for keys. */
export function seesProject(caller: Caller, projectId: string | null): boolean {
  const visible = visibleProjects(caller);
  return visible === undefined || (projectId !== null && visible.includes(projectId));
}
