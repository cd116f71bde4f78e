import type { Caller } from '../../admission/admission.ts';
import type { LedgerQuery } from '../../store/ledger-store.ts';
import type { ResponsesScope } from '../../store/responses-store.ts';
import { visibleProjects } from '../users/access.ts';

/**
 * The projects whose requests and responses a caller may read: its key's project, a member's
 * projects, or undefined for every project's (the master key, admin keys, owners, admins and
 * viewers). A route that reads the request log has always authenticated its caller; being asked
 * without one is a bug, and fails closed.
 */
export function readableProjects(caller: Caller | null): readonly string[] | undefined {
  if (!caller) throw new Error('a scoped read without an authenticated caller');
  return visibleProjects(caller);
}

/**
 * The request log's filters bound to the projects a caller sees: a `project_id` of its own is
 * kept, any other gives way to its own projects (a project key asking for another project reads
 * its own, as it always has).
 */
export function withinProjects<Q extends Pick<LedgerQuery, 'projectId' | 'projectIds'>>(
  filters: Q,
  projects: readonly string[] | undefined,
): Q {
  if (projects === undefined) return filters;
  if (filters.projectId !== undefined && projects.includes(filters.projectId)) return filters;
  return { ...filters, projectId: undefined, projectIds: projects };
}

/** Stored responses as the caller sees them: saved under its project, read from it alone unless it reads every project. */
export function responsesScope(caller: Caller): ResponsesScope {
  return { projectId: caller.projectId, readsAll: visibleProjects(caller) === undefined };
}
