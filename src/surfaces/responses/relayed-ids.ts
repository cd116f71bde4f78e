import { errors } from '../../errors/catalog.ts';
import type { GatewayError } from '../../errors/gateway-error.ts';
import { referencedIds, type StoredIdReference } from './stored-ids.ts';
import type { RelayedIdsStore } from '../../store/relayed-ids-store.ts';
import type { Caller } from '../../admission/admission.ts';

/**
 * A relayed Responses request may name only what the upstream handed out to the caller's project:
 * every project is relayed with the operator's one upstream key, so the upstream would resolve
 * another project's response, conversation or item as readily as the caller's own. Checked
 * before anything is sent upstream; another project's id is answered exactly as an unknown one
 * (the same 404, after the same wait). The master key and admin keys, which read every project's
 * stored responses, name any id, as they did.
 */
export async function refuseForeignIds(
  body: Record<string, unknown>,
  caller: Caller,
  store: RelayedIdsStore | undefined,
): Promise<void> {
  if (caller.admin) return;
  const refs = referencedIds(body);
  if (refs.length === 0) return;
  // Without a store nothing was recorded, and a key with no project owns nothing: both refuse.
  const owned =
    store && caller.projectId !== null
      ? await store.owned(
          caller.projectId,
          refs.map((r) => r.id),
        )
      : new Set<string>();
  const foreign = refs.find((r) => !owned.has(r.id));
  if (foreign) throw notFound(foreign);
}

/** The 404 an unknown id of this kind gets, in OpenAI's words. */
function notFound(ref: StoredIdReference): GatewayError {
  if (ref.kind === 'response') return errors.responseNotFound(ref.id, ref.param);
  if (ref.kind === 'conversation') return errors.conversationNotFound(ref.id, ref.param);
  return errors.itemNotFound(ref.id, ref.param);
}

/**
 * Records ids a relayed response handed out as the caller's project's (off the client's path: a
 * lookup waits for it). The master key has no project: what it is handed, no project's key names.
 */
export function idRecorder(
  caller: Caller,
  store: RelayedIdsStore | undefined,
  log: (message: string) => void,
): ((ids: readonly string[]) => void) | undefined {
  const project = caller.projectId;
  if (!store || project === null) return undefined;
  return (ids) => {
    if (ids.length === 0) return;
    store
      .record(project, ids)
      .catch((err: Error) =>
        log(`relayed ids: could not record ${ids.length} id(s) of project ${project} (${ids[0]}, ...): ${err.message}`),
      );
  };
}
