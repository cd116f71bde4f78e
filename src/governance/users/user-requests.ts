import { z } from 'zod';
import { parseWith } from '../keys/admin-requests.ts';

/** POST /admin/users/{user_id}: a role, and a member's projects. */
export const setAccessSchema = z
  .strictObject({
    role: z.enum(['owner', 'admin', 'viewer', 'member']),
    /** A member's projects (ids); refused for the other roles, which reach every project. */
    projects: z.array(z.string().min(1).max(64)).max(1000).optional(),
  })
  .refine((a) => a.role === 'member' || a.projects === undefined, {
    message: 'projects is for the member role only',
    path: ['projects'],
  })
  .refine((a) => a.role !== 'member' || (a.projects?.length ?? 0) > 0, {
    message: 'a member needs at least one project',
    path: ['projects'],
  });

export const parseSetAccess = (body: unknown): z.infer<typeof setAccessSchema> => parseWith(setAccessSchema, body);
