import type { Caller } from '../../admission/admission.ts';
import type { ResponsesScope } from '../../store/responses-store.ts';

/**
 * The project whose requests and responses a caller may read: its key's project, or undefined for
 * every project's (the master key and admin keys). A route that reads the request log has always
 * authenticated its caller; being asked without one is a bug, and fails closed.
 */
export function readableProject(caller: Caller | null): string | undefined {
  if (!caller) throw new Error('a scoped read without an authenticated caller');
  return caller.admin ? undefined : (caller.projectId ?? undefined);
}

/** Stored responses as the caller sees them: saved under its project, read from it alone unless admin. */
export function responsesScope(caller: Caller): ResponsesScope {
  return { projectId: caller.projectId, readsAll: caller.admin };
}
