import { z } from 'zod';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const day = (what: string) =>
  z
    .string()
    .regex(DAY, `${what} must be a UTC day, YYYY-MM-DD`)
    .refine((d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d), {
      message: `${what} is not a day of the calendar`,
    })
    .describe(`${what}: a UTC day, YYYY-MM-DD (inclusive).`);

/** POST /admin/reconciliations' body: a provider of reconcile.providers and a range of whole UTC days. */
export const runReconciliationSchema = z.strictObject({
  provider: z.string().min(1).describe("The ledger's provider name, as under reconcile.providers."),
  from: day('from'),
  to: day('to'),
});
