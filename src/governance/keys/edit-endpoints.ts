import { errors } from '../../errors/catalog.ts';
import type { UpdateEndpoint } from './admin-requests.ts';
import type { Endpoint, EndpointChanges } from './governance-store.ts';
import { type Change, checkModel, type ManageDeps } from './manage-keys.ts';

async function requireEndpoint(deps: ManageDeps, project: string, name: string): Promise<Endpoint> {
  const endpoint = await deps.governance.withStore((store) => store.getEndpoint(project, name));
  if (!endpoint) throw errors.notFound('endpoint', `${project}/${name}`, 'endpoint');
  return endpoint;
}

/** A PATCH body as the store's changes: given fields replace, null goes back to the config's, absent ones are kept. */
function endpointChanges(input: UpdateEndpoint): EndpointChanges {
  const changes: EndpointChanges = {};
  if (input.model !== undefined) changes.model = input.model;
  if (input.stream_profile !== undefined) changes.streamProfile = input.stream_profile;
  if (input.usage !== undefined) changes.usage = input.usage;
  if (input.error_style !== undefined) changes.errorStyle = input.error_style;
  if (input.vendor_events !== undefined) changes.vendorEvents = input.vendor_events;
  if (input.cache !== undefined) changes.cache = input.cache;
  return changes;
}

/** Edits an endpoint (its model, its stream settings, its cache): within a second on every instance. */
export async function updateEndpoint(
  deps: ManageDeps,
  project: string,
  name: string,
  input: UpdateEndpoint,
): Promise<Change<Endpoint>> {
  const before = await requireEndpoint(deps, project, name);
  if (input.model !== undefined) checkModel(deps, input.model);
  const updated = await deps.governance.withStore((store) => store.updateEndpoint(project, name, endpointChanges(input)));
  deps.governance.announce({ kind: 'endpoint', project, name });
  if (!updated) throw errors.notFound('endpoint', `${project}/${name}`, 'endpoint');
  return { before, after: await requireEndpoint(deps, project, name) };
}

/** Deletes an endpoint for good (the ledger names keys and projects, not endpoints): `after` is null. */
export async function deleteEndpoint(
  deps: ManageDeps,
  project: string,
  name: string,
): Promise<{ before: Endpoint; after: null }> {
  const before = await requireEndpoint(deps, project, name);
  const deleted = await deps.governance.withStore((store) => store.deleteEndpoint(project, name));
  deps.governance.announce({ kind: 'endpoint', project, name });
  if (!deleted) throw errors.notFound('endpoint', `${project}/${name}`, 'endpoint');
  return { before, after: null };
}
