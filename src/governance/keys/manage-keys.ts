import { randomBytes } from 'node:crypto';
import { errors } from '../../errors/catalog.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { CreateEndpoint, CreateKey, CreateProject, RotateKey } from './admin-requests.ts';
import type { ApiKey, Endpoint, Project } from './governance-store.ts';
import type { Governance } from './governance.ts';
import { formatKey, newKeyId, newSecret } from './key-format.ts';

export interface ManageDeps {
  governance: Governance;
  /** The tier names of the config (`tiers`): a key or project may only name one of these. */
  tiers: readonly string[];
  /** Throws (a GatewayError) when a model name does not resolve: an alias or provider/model of an enabled provider. */
  resolveModel: (name: string) => unknown;
  now?: () => number;
}

/**
 * What a mutation did to its target, both sides at hand for whoever records it (the audit log):
 * a deleted key or project is its `after` with `deleted_at` set.
 */
export interface Change<T> {
  before: T;
  after: T;
}

export function nowOf(deps: ManageDeps): number {
  return (deps.now ?? Date.now)();
}

/** A key as created or rotated: the only moment its plaintext exists outside the client. */
export interface IssuedKey {
  key: ApiKey;
  plaintext: string;
}

export function checkTier(deps: ManageDeps, tier: string | undefined): string | null {
  if (tier === undefined) return null;
  if (!deps.tiers.includes(tier)) {
    const known = deps.tiers.length ? deps.tiers.join(', ') : 'the config defines none';
    throw errors.invalidRequest(`tier ${tier} is not a tier of the config (tiers: ${known}).`, 'tier');
  }
  return tier;
}

export async function createProject(deps: ManageDeps, input: CreateProject): Promise<Project> {
  const project: Project = {
    id: input.id ?? `proj_${randomBytes(6).toString('hex')}`,
    name: input.name,
    tier: checkTier(deps, input.tier),
    budgetDayUsd: input.budgets?.daily_usd ?? null,
    budgetMonthUsd: input.budgets?.monthly_usd ?? null,
    allowedModels: input.models ?? null,
    metadata: input.metadata ?? null,
    createdAt: nowOf(deps),
    deletedAt: null,
  };
  // A deleted project's id stays taken: its ledger rows and spend must never become another's.
  const created = await deps.governance.withStore((store) => store.createProject(project));
  if (!created) throw errors.alreadyExists('project', project.id, 'id');
  return project;
}

/** The project, unless there is none or it was deleted (404 either way). */
export async function requireProject(deps: ManageDeps, id: string): Promise<Project> {
  const project = await deps.governance.withStore((store) => store.getProject(id));
  if (!project || project.deletedAt !== null) throw errors.notFound('project', id, 'project');
  return project;
}

export async function createKey(deps: ManageDeps, input: CreateKey): Promise<IssuedKey> {
  await requireProject(deps, input.project);
  const now = nowOf(deps);
  const expiresAt = input.expires_at ? Date.parse(input.expires_at) : input.expires_in_s ? now + input.expires_in_s * 1000 : null;
  const secret = newSecret();
  const base = {
    projectId: input.project,
    name: input.name ?? null,
    secretHash: deps.governance.hash(secret).toString('hex'),
    previousHash: null,
    previousValidUntil: null,
    tier: checkTier(deps, input.tier),
    allowedModels: input.models ?? null,
    budgetDayUsd: input.budgets?.daily_usd ?? null,
    budgetMonthUsd: input.budgets?.monthly_usd ?? null,
    admin: input.admin ?? false,
    createdAt: now,
    expiresAt,
    revokedAt: null,
    lastUsedAt: null,
    disabledAt: null,
    deletedAt: null,
  };
  // 64 random bits per id: a clash is not expected in the life of a deployment, but is not fatal.
  for (let attempt = 0; attempt < 3; attempt++) {
    const key: ApiKey = { id: newKeyId(), ...base };
    if (await deps.governance.withStore((store) => store.createKey(key))) {
      // An instance may remember the id as unknown (someone presented it before it existed).
      deps.governance.announce({ kind: 'key', id: key.id });
      return { key, plaintext: formatKey(key.id, secret) };
    }
  }
  throw new Error('could not allocate a key id in 3 attempts');
}

/** The key, unless there is none or it was deleted (404 either way). */
export async function requireKey(deps: ManageDeps, id: string): Promise<ApiKey> {
  const key = await deps.governance.withStore((store) => store.getKey(id));
  if (!key || key.deletedAt !== null) throw errors.notFound('key', id, 'key_id');
  return key;
}

/**
 * Revoked at once on this instance (its cache forgets the key), and within a second on the others
 * (the announcement; auth.key_cache_ttl_s if it is lost).
 */
export async function revokeKey(deps: ManageDeps, id: string): Promise<Change<ApiKey>> {
  const before = await requireKey(deps, id);
  const after = await deps.governance.withStore((store) => store.revokeKey(id, nowOf(deps)));
  deps.governance.announce({ kind: 'key', id });
  if (!after) throw errors.notFound('key', id, 'key_id');
  return { before, after };
}

/**
 * A new secret for the same key id (its ledger rows, limits and budgets carry on). The old secret
 * stops at once, or after `grace_s` so that clients can be moved over.
 */
export async function rotateKey(deps: ManageDeps, id: string, input: RotateKey): Promise<IssuedKey & { before: ApiKey }> {
  const current = await requireKey(deps, id);
  if (current.revokedAt !== null) throw errors.keyChanged(id);
  const secret = newSecret();
  const graceMs = (input.grace_s ?? 0) * 1000;
  const previousValidUntil = graceMs > 0 ? nowOf(deps) + graceMs : null;
  const newHash = deps.governance.hash(secret).toString('hex');
  const rotated = await deps.governance.withStore((store) => store.rotateKey(current, newHash, previousValidUntil));
  deps.governance.announce({ kind: 'key', id });
  if (!rotated) throw errors.keyChanged(id);
  return { before: current, key: await requireKey(deps, id), plaintext: formatKey(id, secret) };
}

export async function createEndpoint(deps: ManageDeps, input: CreateEndpoint): Promise<Endpoint> {
  await requireProject(deps, input.project);
  checkModel(deps, input.model);
  const endpoint: Endpoint = {
    projectId: input.project,
    name: input.name,
    model: input.model,
    streamProfile: input.stream_profile ?? null,
    usage: input.usage ?? null,
    errorStyle: input.error_style ?? null,
    vendorEvents: input.vendor_events ?? null,
    cache: input.cache ?? null,
    createdAt: nowOf(deps),
  };
  const created = await deps.governance.withStore((store) => store.createEndpoint(endpoint));
  // An instance may remember that the endpoint did not exist.
  deps.governance.announce({ kind: 'endpoint', project: endpoint.projectId, name: endpoint.name });
  if (!created) throw errors.alreadyExists('endpoint', `${input.project}/${input.name}`, 'name');
  return endpoint;
}

/** An endpoint's model must resolve now (an alias, or provider/model of an enabled provider): a 400 naming `model` otherwise. */
export function checkModel(deps: ManageDeps, model: string): void {
  try {
    deps.resolveModel(model);
  } catch (err) {
    const reason = err instanceof GatewayError ? err.message : String(err);
    throw errors.invalidRequest(`model ${model} does not resolve: ${reason}`, 'model');
  }
}
