import { z } from 'zod';
import { getJson, ReportError } from './fetch-report.ts';
import { dayOf, type ReportRow } from './rows.ts';

/** What is read of GET /api/v1/generation's answer (unknown fields ignored). */
const generation = z.object({
  data: z.object({
    created_at: z.string().nullish(),
    model: z.string(),
    total_cost: z.number().nullish(),
    native_tokens_prompt: z.number().nullish(),
    native_tokens_cached: z.number().nullish(),
    native_tokens_completion: z.number().nullish(),
  }),
});

export interface OpenRouterReportOptions {
  baseUrl: string;
  adminKey: string;
}

/** Lookups at once: a run of thousands stays well inside OpenRouter's per-key request rate. */
const CONCURRENCY = 4;

/**
 * OpenRouter has no usage report by day; it keeps a record per generation, looked up by the id
 * the ledger kept as the upstream request id (GET /api/v1/generation?id=). Each found record is a
 * row of its day (the record's created_at) and model, in native tokens (what OpenRouter bills and
 * reports in a response's usage). A generation it does not know (404) is a note, and its ledger
 * row has nothing to match on the report's side.
 */
export async function fetchOpenRouterReport(
  o: OpenRouterReportOptions,
  generations: readonly { upstreamId: string; createdAt: number }[],
): Promise<{ rows: ReportRow[]; notes: string[] }> {
  const headers = { authorization: `Bearer ${o.adminKey}` };
  const rows: ReportRow[] = [];
  const notFound: string[] = [];
  let next = 0;
  async function worker(): Promise<void> {
    while (next < generations.length) {
      const g = generations[next++];
      const url = new URL('/api/v1/generation', o.baseUrl);
      url.searchParams.set('id', g.upstreamId);
      let body: unknown;
      try {
        body = await getJson('OpenRouter generation API', url, headers);
      } catch (err) {
        if (err instanceof ReportError && / answered 404:/.test(err.message)) {
          notFound.push(g.upstreamId);
          continue;
        }
        throw err;
      }
      const parsed = generation.safeParse(body);
      if (!parsed.success)
        throw new ReportError(`OpenRouter generation API answered a record sluice cannot read for ${g.upstreamId}`);
      const d = parsed.data.data;
      const created = d.created_at ? Date.parse(d.created_at) : Number.NaN;
      rows.push({
        day: dayOf(Number.isFinite(created) ? created : g.createdAt),
        model: d.model,
        input: d.native_tokens_prompt ?? 0,
        cached: d.native_tokens_cached ?? 0,
        output: d.native_tokens_completion ?? 0,
        cost: d.total_cost ?? 0,
      });
    }
  }
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, generations.length) }, worker));
  const notes =
    notFound.length > 0
      ? [
          `${notFound.length} of ${generations.length} generations unknown to OpenRouter (first: ${notFound.slice(0, 3).join(', ')})`,
        ]
      : [];
  return { rows, notes };
}
