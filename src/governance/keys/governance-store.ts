import type { Kysely, Selectable } from 'kysely';
import type { StreamProfileName } from '../../config/stream-profile-names.ts';
import type { ApiKeysTable, Database, EndpointsTable, ProjectsTable } from '../../store/database.ts';

export interface Project {
  id: string;
  name: string;
  tier: string | null;
  budgetDayUsd: number | null;
  budgetMonthUsd: number | null;
  createdAt: number;
}

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
}

export interface Endpoint {
  projectId: string;
  name: string;
  /** An alias or provider/model: what a bare or missing model name means on this endpoint. */
  model: string;
  streamProfile: StreamProfileName | null;
  usage: 'opt_in' | 'always' | null;
  errorStyle: 'data' | 'event' | null;
  vendorEvents: 'drop' | 'passthrough' | null;
  createdAt: number;
}

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
        created_at: p.createdAt,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async getProject(id: string): Promise<Project | undefined> {
    const row = await this.db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? projectOf(row) : undefined;
  }

  async listProjects(): Promise<Project[]> {
    const rows = await this.db.selectFrom('projects').selectAll().orderBy('created_at').orderBy('id').execute();
    return rows.map(projectOf);
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
        allowed_models: k.allowedModels ? JSON.stringify(k.allowedModels) : null,
        budget_day_usd: k.budgetDayUsd,
        budget_month_usd: k.budgetMonthUsd,
        admin: k.admin ? 1 : 0,
        created_at: k.createdAt,
        expires_at: k.expiresAt,
        revoked_at: k.revokedAt,
        last_used_at: k.lastUsedAt,
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
        'p.created_at as p_created_at',
      ])
      .where('k.id', '=', id)
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
        created_at: row.p_created_at,
      }),
    };
  }

  /** Oldest first; only one project's with `projectId`. */
  async listKeys(projectId?: string): Promise<ApiKey[]> {
    let query = this.db.selectFrom('api_keys').selectAll();
    if (projectId !== undefined) query = query.where('project_id', '=', projectId);
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

  async listEndpoints(projectId?: string): Promise<Endpoint[]> {
    let query = this.db.selectFrom('endpoints').selectAll();
    if (projectId !== undefined) query = query.where('project_id', '=', projectId);
    const rows = await query.orderBy('project_id').orderBy('name').execute();
    return rows.map(endpointOf);
  }
}

/** pg returns double precision as numbers and bigint as numbers (open-database.ts); SQLite alike. */
const nullableNumber = (v: number | null): number | null => (v === null ? null : Number(v));

function projectOf(row: Selectable<ProjectsTable>): Project {
  return {
    id: row.id,
    name: row.name,
    tier: row.tier,
    budgetDayUsd: nullableNumber(row.budget_day_usd),
    budgetMonthUsd: nullableNumber(row.budget_month_usd),
    createdAt: Number(row.created_at),
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
    allowedModels: row.allowed_models === null ? null : (JSON.parse(row.allowed_models) as string[]),
    budgetDayUsd: nullableNumber(row.budget_day_usd),
    budgetMonthUsd: nullableNumber(row.budget_month_usd),
    admin: Boolean(row.admin),
    createdAt: Number(row.created_at),
    expiresAt: nullableNumber(row.expires_at),
    revokedAt: nullableNumber(row.revoked_at),
    lastUsedAt: nullableNumber(row.last_used_at),
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
    createdAt: Number(row.created_at),
  };
}
