import { z } from 'zod';
import { cacheSettingSchema } from '../../config/schema.ts';
import { STREAM_PROFILE_NAMES } from '../../config/stream-profile-names.ts';
import { errors } from '../../errors/catalog.ts';
import { schemaError } from '../../protocol/schema-errors.ts';

/**
 * Project ids and endpoint names are URL path segments (`/{project}/{endpoint}/v1/...`): letters,
 * digits, `_` and `-` only, so a client never has to encode them and `.` / `..` (which clients
 * normalise away) cannot occur.
 */
const SLUG = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const slug = z.string().regex(SLUG, 'must be 1-64 letters, digits, _ or - (starting with a letter or digit)');

/** First path segments sluice serves itself: no project may take them. */
const RESERVED_PROJECT_IDS = new Set(['v1', 'admin', 'health', 'healthz', 'readyz']);

const usd = z.number().positive().max(1e9);
const budgets = z.strictObject({ daily_usd: usd.optional(), monthly_usd: usd.optional() });
/** In a PATCH: a given amount replaces, null removes that budget, an absent one is kept. */
const budgetChanges = z.strictObject({ daily_usd: usd.nullable().optional(), monthly_usd: usd.nullable().optional() });
const tier = z.string().min(1).max(64);
const label = z.string().min(1).max(200);
/** As clients name them: aliases or provider/model. */
const models = z.array(z.string().min(1).max(256)).max(1000);
/** The operator's own labels: shown by the admin API, never acted on. */
const metadata = z
  .record(z.string().min(1).max(64), z.string().max(1000))
  .refine((m) => Object.keys(m).length <= 50, 'holds at most 50 entries');
const expiresAt = z.iso.datetime({ offset: true });
const expiresInS = z
  .number()
  .int()
  .positive()
  .max(100 * 365 * 86_400);
const oneExpiry = {
  check: (k: { expires_at?: unknown; expires_in_s?: unknown }) => k.expires_at === undefined || k.expires_in_s === undefined,
  params: { message: 'give expires_at or expires_in_s, not both', path: ['expires_in_s'] },
};

export const createProjectSchema = z.strictObject({
  id: slug.refine((id) => !RESERVED_PROJECT_IDS.has(id.toLowerCase()), 'is a path sluice serves itself').optional(),
  name: label,
  tier: tier.optional(),
  budgets: budgets.optional(),
  /** What its keys that list no models of their own may use. */
  models: models.optional(),
  metadata: metadata.optional(),
});

/** PATCH /admin/projects/{project}: what is given changes, null clears (the tier, the models, the metadata). */
export const updateProjectSchema = z.strictObject({
  name: label.optional(),
  tier: tier.nullable().optional(),
  budgets: budgetChanges.optional(),
  models: models.nullable().optional(),
  metadata: metadata.nullable().optional(),
});

export const createKeySchema = z
  .strictObject({
    project: z.string().min(1).max(64),
    name: label.optional(),
    tier: tier.optional(),
    models: models.optional(),
    /** ISO 8601 date and time. */
    expires_at: expiresAt.optional(),
    expires_in_s: expiresInS.optional(),
    budgets: budgets.optional(),
    admin: z.boolean().optional(),
  })
  .refine(oneExpiry.check, oneExpiry.params);

/** PATCH /admin/keys/{key_id}: what is given changes, null clears; `disabled` disables or enables it. */
export const updateKeySchema = z
  .strictObject({
    name: label.nullable().optional(),
    tier: tier.nullable().optional(),
    models: models.nullable().optional(),
    budgets: budgetChanges.optional(),
    /** null: it never expires. */
    expires_at: expiresAt.nullable().optional(),
    expires_in_s: expiresInS.optional(),
    disabled: z.boolean().optional(),
  })
  .refine(oneExpiry.check, oneExpiry.params);

export const rotateKeySchema = z.strictObject({
  /** How long the replaced secret keeps working (0: it stops at once). At most a week. */
  grace_s: z
    .number()
    .int()
    .nonnegative()
    .max(7 * 86_400)
    .optional(),
});

export const createEndpointSchema = z.strictObject({
  project: z.string().min(1).max(64),
  name: slug,
  /** An alias or provider/model. */
  model: z.string().min(1).max(256),
  stream_profile: z.enum(STREAM_PROFILE_NAMES).optional(),
  usage: z.enum(['opt_in', 'always']).optional(),
  error_style: z.enum(['data', 'event']).optional(),
  vendor_events: z.enum(['drop', 'passthrough']).optional(),
  /** Its opt-in to the response cache, as a tier's or route's `cache` in the config. */
  cache: cacheSettingSchema.optional(),
});

/** PATCH /admin/endpoints/{project}/{endpoint}: what is given changes, null goes back to the config's. */
export const updateEndpointSchema = z.strictObject({
  model: z.string().min(1).max(256).optional(),
  stream_profile: z.enum(STREAM_PROFILE_NAMES).nullable().optional(),
  usage: z.enum(['opt_in', 'always']).nullable().optional(),
  error_style: z.enum(['data', 'event']).nullable().optional(),
  vendor_events: z.enum(['drop', 'passthrough']).nullable().optional(),
  /** A new setting replaces the old whole; null: not cached through the endpoint. */
  cache: cacheSettingSchema.nullable().optional(),
});

export type CreateProject = z.infer<typeof createProjectSchema>;
export type UpdateProject = z.infer<typeof updateProjectSchema>;
export type CreateKey = z.infer<typeof createKeySchema>;
export type UpdateKey = z.infer<typeof updateKeySchema>;
export type RotateKey = z.infer<typeof rotateKeySchema>;
export type CreateEndpoint = z.infer<typeof createEndpointSchema>;
export type UpdateEndpoint = z.infer<typeof updateEndpointSchema>;

/**
 * Fields the admin API shows but a PATCH cannot change: naming one is a 400 naming it, rather
 * than the "unrecognized key" a field nobody knows gets. A key stays in its project (its ledger
 * rows, limits and budgets are its project's) and keeps its admin flag (issue a new key instead).
 */
const FIXED = {
  project: ['id', 'created_at', 'deleted_at', 'object'],
  key: [
    'id',
    'project',
    'admin',
    'prefix',
    'key',
    'status',
    'created_at',
    'revoked_at',
    'disabled_at',
    'deleted_at',
    'last_used_at',
    'object',
  ],
  endpoint: ['project', 'name', 'base_path', 'created_at', 'object'],
} as const;

function refuseFixed(what: keyof typeof FIXED, body: unknown): void {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return;
  const field = FIXED[what].find((f) => Object.hasOwn(body, f));
  if (field) throw errors.invalidRequest(`${field} of a ${what} cannot be changed.`, field);
}

/** A body checked against its schema: a 400 naming the field otherwise. */
export function parseWith<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body);
  if (!result.success) throw schemaError(result.error);
  return result.data;
}

export const parseCreateProject = (body: unknown): CreateProject => parseWith(createProjectSchema, body);
export const parseCreateKey = (body: unknown): CreateKey => parseWith(createKeySchema, body);
export const parseRotateKey = (body: unknown): RotateKey => parseWith(rotateKeySchema, body);
export const parseCreateEndpoint = (body: unknown): CreateEndpoint => parseWith(createEndpointSchema, body);
export function parseUpdateProject(body: unknown): UpdateProject {
  refuseFixed('project', body);
  return parseWith(updateProjectSchema, body);
}
export function parseUpdateKey(body: unknown): UpdateKey {
  refuseFixed('key', body);
  return parseWith(updateKeySchema, body);
}
export function parseUpdateEndpoint(body: unknown): UpdateEndpoint {
  refuseFixed('endpoint', body);
  return parseWith(updateEndpointSchema, body);
}
