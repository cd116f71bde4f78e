import type { Kysely, Selectable } from 'kysely';
import type { CacheConfig } from '../../config/schema.ts';
import type { StreamProfileName } from '../../config/stream-profile-names.ts';
import type { ApiKeysTable, Database, EndpointsTable, ProjectsTable } from '../../store/database.ts';

export interface Project {
  id: string;
  name: string;
  tier: string | null;
  budgetDayUsd: number | null;
  budgetMonthUsd: number | null;
  /** What its keys that list no models of their own may use; null: any model. */
  allowedModels: string[] | null;
  /** The operator's own labels (owner, cost centre...): shown, never acted on. */
  metadata: Record<string, string> | null;
  createdAt: number;
  /** Soft deletion: its keys stop, its rows and spend stay. */
  deletedAt: number | null;
}

/** What PATCH may change of a project (the rest is kept). */
export type ProjectChanges = Partial<
  Pick<Project, 'name' | 'tier' | 'budgetDayUsd' | 'budgetMonthUsd' | 'allowedModels' | 'metadata'>
>;

/** A gateway-issued key as stored: the hash of its secret, never the secret. */
export interface ApiKey {
  id: string;
  projectId: string;
  name: string | null;
  /** Hex of the keyed hash (key-format.ts). */
  secretHash: string;
  /** During a rotation's grace period: the previous secret's hash, valid until `previousValidUntil`. */
  previousHash: string | null;
  previousValidUntil: number | null;
  tier: string | null;
  allowedModels: string[] | null;
  budgetDayUsd: number | null;
  budgetMonthUsd: number | null;
  admin: boolean;
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
  lastUsedAt: number | null;
  /** Set while disabled: refused until enabled again (revocation, unlike this, is for good). */
  disabledAt: number | null;
  /** Soft deletion: refused like an unknown key, hidden from listings; its ledger rows stay. */
  deletedAt: number | null;
}

/** What PATCH may change of a key (its id, project, secret and admin flag stay). */
export type KeyChanges = Partial<
  Pick<ApiKey, 'name' | 'tier' | 'allowedModels' | 'budgetDayUsd' | 'budgetMonthUsd' | 'expiresAt' | 'disabledAt'>
>;

export interface Endpoint {
  projectId: string;
  name: string;
  /** An alias or provider/model: what a bare or missing model name means on this endpoint. */
  model: string;
  streamProfile: StreamProfileName | null;
  usage: 'opt_in' | 'always' | null;
  errorStyle: 'data' | 'event' | null;
  vendorEvents: 'drop' | 'passthrough' | null;
  /** Its opt-in to the response cache; null: its route's or tier's, if any (cache-policy.ts). */
  cache: CacheConfig | null;
  createdAt: number;
}

/** What PATCH may change of an endpoint (its project and name are its address). */
export type EndpointChanges = Partial<
  Pick<Endpoint, 'model' | 'streamProfile' | 'usage' | 'errorStyle' | 'vendorEvents' | 'cache'>
>;

/**
 * Projects, their keys and their endpoints, over Kysely on node:sqlite or PostgreSQL (the same
 * database as the ledger). Creation reports a clash instead of overwriting: `false` when the id
 * (or the endpoint's name in its project) is taken.
 */
export class GovernanceStore {
  private readonly db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async createProject(p: Project): Promise<boolean> {
    const result = await this.db
      .insertInto('projects')
      .values({
        id: p.id,
        name: p.name,
        tier: p.tier,
        budget_day_usd: p.budgetDayUsd,
        budget_month_usd: p.budgetMonthUsd,
        allowed_models: jsonOrNull(p.allowedModels),
        metadata: jsonOrNull(p.metadata),
        created_at: p.createdAt,
        deleted_at: p.deletedAt,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async getProject(id: string): Promise<Project | undefined> {
    const row = await this.db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? projectOf(row) : undefined;
  }

  /** Oldest first; the deleted ones only with `includeDeleted`. */
  async listProjects(includeDeleted = false): Promise<Project[]> {
    let query = this.db.selectFrom('projects').selectAll();
    if (!includeDeleted) query = query.where('deleted_at', 'is', null);
    const rows = await query.orderBy('created_at').orderBy('id').execute();
    return rows.map(projectOf);
  }

  /** False when there is no such project left (deleted meanwhile). */
  async updateProject(id: string, changes: ProjectChanges): Promise<boolean> {
    const result = await this.db
      .updateTable('projects')
      .set({
        name: changes.name,
        tier: changes.tier,
        budget_day_usd: changes.budgetDayUsd,
        budget_month_usd: changes.budgetMonthUsd,
        allowed_models: changes.allowedModels === undefined ? undefined : jsonOrNull(changes.allowedModels),
        metadata: changes.metadata === undefined ? undefined : jsonOrNull(changes.metadata),
      })
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Keys of the project that could still authenticate: neither deleted nor revoked. */
  async liveKeyIds(projectId: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .select('id')
      .where('project_id', '=', projectId)
      .where('deleted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .execute();
    return rows.map((r) => r.id);
  }

  /**
   * Deletes the project softly, its keys with it (softly too) and its endpoints (which carry no
   * history), in one transaction. False when it was deleted already.
   */
  async deleteProject(id: string, at: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('projects')
        .set({ deleted_at: at })
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return false;
      await trx
        .updateTable('api_keys')
        .set({ deleted_at: at })
        .where('project_id', '=', id)
        .where('deleted_at', 'is', null)
        .execute();
      await trx.deleteFrom('endpoints').where('project_id', '=', id).execute();
      return true;
    });
  }

  async createKey(k: ApiKey): Promise<boolean> {
    const result = await this.db
      .insertInto('api_keys')
      .values({
        id: k.id,
        project_id: k.projectId,
        name: k.name,
        secret_hash: k.secretHash,
        previous_hash: k.previousHash,
        previous_valid_until: k.previousValidUntil,
        tier: k.tier,
        allowed_models: jsonOrNull(k.allowedModels),
        budget_day_usd: k.budgetDayUsd,
        budget_month_usd: k.budgetMonthUsd,
        admin: k.admin ? 1 : 0,
        created_at: k.createdAt,
        expires_at: k.expiresAt,
        revoked_at: k.revokedAt,
        last_used_at: k.lastUsedAt,
        disabled_at: k.disabledAt,
        deleted_at: k.deletedAt,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async getKey(id: string): Promise<ApiKey | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? keyOf(row) : undefined;
  }

  /** The key and its project in one round trip: what authentication needs on a cache miss. */
  async findKeyWithProject(id: string): Promise<{ key: ApiKey; project: Project } | undefined> {
    const row = await this.db
      .selectFrom('api_keys as k')
      .innerJoin('projects as p', 'p.id', 'k.project_id')
      .selectAll('k')
      .select([
        'p.name as p_name',
        'p.tier as p_tier',
        'p.budget_day_usd as p_budget_day_usd',
        'p.budget_month_usd as p_budget_month_usd',
        'p.allowed_models as p_allowed_models',
        'p.created_at as p_created_at',
      ])
      .where('k.id', '=', id)
      // A deleted key, or a key of a deleted project, is as unknown as one never issued.
      .where('k.deleted_at', 'is', null)
      .where('p.deleted_at', 'is', null)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      key: keyOf(row),
      project: projectOf({
        id: row.project_id,
        name: row.p_name,
        tier: row.p_tier,
        budget_day_usd: row.p_budget_day_usd,
        budget_month_usd: row.p_budget_month_usd,
        allowed_models: row.p_allowed_models,
        metadata: null,
        created_at: row.p_created_at,
        deleted_at: null,
      }),
    };
  }

  /** Oldest first; only one project's with `projectId`; the deleted ones only with `includeDeleted`. */
  async listKeys(projectId?: string, includeDeleted = false): Promise<ApiKey[]> {
    let query = this.db.selectFrom('api_keys').selectAll();
    if (projectId !== undefined) query = query.where('project_id', '=', projectId);
    if (!includeDeleted) query = query.where('deleted_at', 'is', null);
    const rows = await query.orderBy('created_at').orderBy('id').execute();
    return rows.map(keyOf);
  }

  /** Marks the key revoked (the first revocation's time is kept); undefined if there is no such key. */
  async revokeKey(id: string, at: number): Promise<ApiKey | undefined> {
    await this.db.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).execute();
    return this.getKey(id);
  }

  /**
   * Replaces the key's secret hash. The previous secret keeps working until `previousValidUntil`
   * (a grace period for deploying the new one), or stops at once when it is null. Returns false
   * when the key changed meanwhile (revoked, or rotated by another call): nothing is written then.
   */
  async rotateKey(current: ApiKey, newHash: string, previousValidUntil: number | null): Promise<boolean> {
    const result = await this.db
      .updateTable('api_keys')
      .set({
        secret_hash: newHash,
        previous_hash: previousValidUntil === null ? null : current.secretHash,
        previous_valid_until: previousValidUntil,
      })
      .where('id', '=', current.id)
      .where('secret_hash', '=', current.secretHash)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** False when there is no such key left (deleted meanwhile): nothing is written then. */
  async updateKey(id: string, changes: KeyChanges): Promise<boolean> {
    const result = await this.db
      .updateTable('api_keys')
      .set({
        name: changes.name,
        tier: changes.tier,
        allowed_models: changes.allowedModels === undefined ? undefined : jsonOrNull(changes.allowedModels),
        budget_day_usd: changes.budgetDayUsd,
        budget_month_usd: changes.budgetMonthUsd,
        expires_at: changes.expiresAt,
        disabled_at: changes.disabledAt,
      })
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Soft deletion; false when it was deleted already. */
  async deleteKey(id: string, at: number): Promise<boolean> {
    const result = await this.db
      .updateTable('api_keys')
      .set({ deleted_at: at })
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async touchKey(id: string, at: number): Promise<void> {
    await this.db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
  }

  async createEndpoint(e: Endpoint): Promise<boolean> {
    const result = await this.db
      .insertInto('endpoints')
      .values({
        project_id: e.projectId,
        name: e.name,
        model: e.model,
        stream_profile: e.streamProfile,
        usage: e.usage,
        error_style: e.errorStyle,
        vendor_events: e.vendorEvents,
        cache: jsonOrNull(e.cache),
        created_at: e.createdAt,
      })
      .onConflict((oc) => oc.columns(['project_id', 'name']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async getEndpoint(projectId: string, name: string): Promise<Endpoint | undefined> {
    const row = await this.db
      .selectFrom('endpoints')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('name', '=', name)
      .executeTakeFirst();
    return row ? endpointOf(row) : undefined;
  }

  /** False when there is no such endpoint (deleted meanwhile). */
  async updateEndpoint(projectId: string, name: string, changes: EndpointChanges): Promise<boolean> {
    const result = await this.db
      .updateTable('endpoints')
      .set({
        model: changes.model,
        stream_profile: changes.streamProfile,
        usage: changes.usage,
        error_style: changes.errorStyle,
        vendor_events: changes.vendorEvents,
        cache: changes.cache === undefined ? undefined : jsonOrNull(changes.cache),
      })
      .where('project_id', '=', projectId)
      .where('name', '=', name)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Endpoints carry no history (the ledger names keys and projects): deleted outright. */
  async deleteEndpoint(projectId: string, name: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('endpoints')
      .where('project_id', '=', projectId)
      .where('name', '=', name)
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  async listEndpoints(projectId?: string): Promise<Endpoint[]> {
    let query = this.db.selectFrom('endpoints').selectAll();
    if (projectId !== undefined) query = query.where('project_id', '=', projectId);
    const rows = await query.orderBy('project_id').orderBy('name').execute();
    return rows.map(endpointOf);
  }
}

/** pg returns double precision as numbers and bigint as numbers (open-database.ts); SQLite alike. */
const nullableNumber = (v: number | null): number | null => (v === null ? null : Number(v));
const jsonOrNull = (v: unknown): string | null => (v === null ? null : JSON.stringify(v));
const parsedOrNull = <T>(v: string | null): T | null => (v === null ? null : (JSON.parse(v) as T));

function projectOf(row: Selectable<ProjectsTable>): Project {
  return {
    id: row.id,
    name: row.name,
    tier: row.tier,
    budgetDayUsd: nullableNumber(row.budget_day_usd),
    budgetMonthUsd: nullableNumber(row.budget_month_usd),
    allowedModels: parsedOrNull<string[]>(row.allowed_models),
    metadata: parsedOrNull<Record<string, string>>(row.metadata),
    createdAt: Number(row.created_at),
    deletedAt: nullableNumber(row.deleted_at),
  };
}

function keyOf(row: Selectable<ApiKeysTable>): ApiKey {
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    secretHash: row.secret_hash,
    previousHash: row.previous_hash,
    previousValidUntil: nullableNumber(row.previous_valid_until),
    tier: row.tier,
    allowedModels: parsedOrNull<string[]>(row.allowed_models),
    budgetDayUsd: nullableNumber(row.budget_day_usd),
    budgetMonthUsd: nullableNumber(row.budget_month_usd),
    admin: Boolean(row.admin),
    createdAt: Number(row.created_at),
    expiresAt: nullableNumber(row.expires_at),
    revokedAt: nullableNumber(row.revoked_at),
    lastUsedAt: nullableNumber(row.last_used_at),
    disabledAt: nullableNumber(row.disabled_at),
    deletedAt: nullableNumber(row.deleted_at),
  };
}

function endpointOf(row: Selectable<EndpointsTable>): Endpoint {
  return {
    projectId: row.project_id,
    name: row.name,
    model: row.model,
    streamProfile: row.stream_profile as Endpoint['streamProfile'],
    usage: row.usage as Endpoint['usage'],
    errorStyle: row.error_style as Endpoint['errorStyle'],
    vendorEvents: row.vendor_events as Endpoint['vendorEvents'],
    cache: parsedOrNull<CacheConfig>(row.cache),
    createdAt: Number(row.created_at),
  };
}
