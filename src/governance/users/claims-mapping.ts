import type { Role } from '../../admission/admission.ts';

export interface ClaimMapping {
  /** The claim's name, or a dotted path into an object claim (`realm_access.roles`). */
  claim: string;
  roles: Readonly<Record<string, 'owner' | 'admin' | 'viewer'>>;
  projects: Readonly<Record<string, readonly string[]>>;
}

export interface MappedAccess {
  role: Role;
  projects: string[];
}

const STRENGTH: Record<'owner' | 'admin' | 'viewer', number> = { owner: 3, admin: 2, viewer: 1 };

/** The claim's values: a string is one value, an array its strings (a space-separated string is not split). */
export function claimValues(claims: Readonly<Record<string, unknown>>, path: string): string[] {
  let value: unknown = claims;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
    value = (value as Record<string, unknown>)[part];
  }
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/**
 * What a user's claims grant: the strongest role any value maps to; else membership of every
 * project the values map to; else nothing (the sign-in is refused).
 */
export function mapClaims(claims: Readonly<Record<string, unknown>>, mapping: ClaimMapping): MappedAccess | undefined {
  const values = claimValues(claims, mapping.claim);
  let role: 'owner' | 'admin' | 'viewer' | undefined;
  const projects = new Set<string>();
  for (const value of values) {
    const granted = Object.hasOwn(mapping.roles, value) ? mapping.roles[value] : undefined;
    if (granted && (!role || STRENGTH[granted] > STRENGTH[role])) role = granted;
    if (Object.hasOwn(mapping.projects, value)) for (const p of mapping.projects[value]) projects.add(p);
  }
  if (role) return { role, projects: [] };
  return projects.size > 0 ? { role: 'member', projects: [...projects].sort() } : undefined;
}
