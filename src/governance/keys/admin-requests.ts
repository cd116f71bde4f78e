import { z } from 'zod';
import { STREAM_PROFILE_NAMES } from '../../config/stream-profile-names.ts';
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
const tier = z.string().min(1).max(64);
const label = z.string().min(1).max(200);

const createProjectSchema = z.strictObject({
  id: slug.refine((id) => !RESERVED_PROJECT_IDS.has(id.toLowerCase()), 'is a path sluice serves itself').optional(),
  name: label,
  tier: tier.optional(),
  budgets: budgets.optional(),
});

const createKeySchema = z
  .strictObject({
    project: z.string().min(1).max(64),
    name: label.optional(),
    tier: tier.optional(),
    /** As clients name them: aliases or provider/model. */
    models: z.array(z.string().min(1).max(256)).max(1000).optional(),
    /** ISO 8601 date and time. */
    expires_at: z.iso.datetime({ offset: true }).optional(),
    expires_in_s: z
      .number()
      .int()
      .positive()
      .max(100 * 365 * 86_400)
      .optional(),
    budgets: budgets.optional(),
    admin: z.boolean().optional(),
  })
  .refine((k) => k.expires_at === undefined || k.expires_in_s === undefined, {
    message: 'give expires_at or expires_in_s, not both',
    path: ['expires_in_s'],
  });

const rotateKeySchema = z.strictObject({
  /** How long the replaced secret keeps working (0: it stops at once). At most a week. */
  grace_s: z
    .number()
    .int()
    .nonnegative()
    .max(7 * 86_400)
    .optional(),
});

const createEndpointSchema = z.strictObject({
  project: z.string().min(1).max(64),
  name: slug,
  /** An alias or provider/model. */
  model: z.string().min(1).max(256),
  stream_profile: z.enum(STREAM_PROFILE_NAMES).optional(),
  usage: z.enum(['opt_in', 'always']).optional(),
  error_style: z.enum(['data', 'event']).optional(),
  vendor_events: z.enum(['drop', 'passthrough']).optional(),
});

export type CreateProject = z.infer<typeof createProjectSchema>;
export type CreateKey = z.infer<typeof createKeySchema>;
export type RotateKey = z.infer<typeof rotateKeySchema>;
export type CreateEndpoint = z.infer<typeof createEndpointSchema>;

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
