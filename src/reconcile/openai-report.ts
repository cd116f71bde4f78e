import { z } from 'zod';
import { pages } from './fetch-report.ts';
import { dayOf, type ReportRow } from './rows.ts';

/** What is read of OpenAI's organization usage and costs pages (unknown fields ignored). */
const page = <T extends z.ZodType>(result: T) =>
  z.object({
    data: z.array(z.object({ start_time: z.number(), results: z.array(result) })),
    has_more: z.boolean(),
    next_page: z.string().nullish(),
  });
const usagePage = page(
  z.object({
    input_tokens: z.number(),
    input_cached_tokens: z.number().nullish(),
    output_tokens: z.number(),
    model: z.string().nullish(),
    api_key_id: z.string().nullish(),
  }),
);
const costsPage = page(z.object({ amount: z.object({ value: z.number() }).nullish(), line_item: z.string().nullish() }));

export interface OpenAiReportOptions {
  baseUrl: string;
  adminKey: string;
  apiKeyIds?: readonly string[];
  projectIds?: readonly string[];
}

/**
 * OpenAI's organization reports over [from, to) (epoch ms, whole UTC days): token usage per day,
 * model and API key from GET /v1/organization/usage/completions, and cost per day and model from
 * GET /v1/organization/costs grouped by line item (`gpt-4o-mini-2024-07-18, input`: the model is
 * what comes before the last comma). Each followed page by page (next_page while has_more).
 */
export async function fetchOpenAiReport(o: OpenAiReportOptions, from: number, to: number): Promise<ReportRow[]> {
  const headers = { authorization: `Bearer ${o.adminKey}` };
  const range = (path: string, groupBy: string[]) => {
    const url = new URL(path, o.baseUrl);
    url.searchParams.set('start_time', String(Math.floor(from / 1000)));
    url.searchParams.set('end_time', String(Math.floor(to / 1000)));
    url.searchParams.set('bucket_width', '1d');
    url.searchParams.set('limit', '31');
    for (const g of groupBy) url.searchParams.append('group_by', g);
    for (const id of o.projectIds ?? []) url.searchParams.append('project_ids', id);
    return url;
  };
  const rows: ReportRow[] = [];
  const usageUrl = range('/v1/organization/usage/completions', ['model', 'api_key_id']);
  for (const id of o.apiKeyIds ?? []) usageUrl.searchParams.append('api_key_ids', id);
  for await (const bucket of pages('OpenAI usage API', usageUrl, headers, usagePage)) {
    for (const r of bucket.results) {
      rows.push({
        day: dayOf(bucket.start_time * 1000),
        model: r.model ?? 'unknown',
        input: r.input_tokens,
        cached: r.input_cached_tokens ?? 0,
        output: r.output_tokens,
        cost: 0,
        ...(r.api_key_id ? { key: r.api_key_id } : {}),
      });
    }
  }
  for await (const bucket of pages('OpenAI costs API', range('/v1/organization/costs', ['line_item']), headers, costsPage)) {
    for (const r of bucket.results) {
      const value = r.amount?.value ?? 0;
      if (value === 0) continue;
      const item = r.line_item ?? 'unknown';
      const comma = item.lastIndexOf(', ');
      rows.push({
        day: dayOf(bucket.start_time * 1000),
        model: comma > 0 ? item.slice(0, comma) : item,
        input: 0,
        cached: 0,
        output: 0,
        cost: value,
      });
    }
  }
  return rows;
}
