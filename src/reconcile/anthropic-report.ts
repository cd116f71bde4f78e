import { z } from 'zod';
import { pages } from './fetch-report.ts';
import { dayOf, type ReportRow } from './rows.ts';

/** What is read of Anthropic's usage and cost report pages (unknown fields ignored). */
const page = <T extends z.ZodType>(result: T) =>
  z.object({
    data: z.array(z.object({ starting_at: z.string(), results: z.array(result) })),
    has_more: z.boolean(),
    next_page: z.string().nullish(),
  });
const count = z.number().nullish();
const usagePage = page(
  z.object({
    uncached_input_tokens: count,
    cache_read_input_tokens: count,
    cache_creation: z.object({ ephemeral_5m_input_tokens: count, ephemeral_1h_input_tokens: count }).nullish(),
    output_tokens: count,
    model: z.string().nullish(),
    api_key_id: z.string().nullish(),
  }),
);
const costPage = page(
  z.object({ amount: z.string(), currency: z.string().nullish(), model: z.string().nullish(), cost_type: z.string().nullish() }),
);

export interface AnthropicReportOptions {
  baseUrl: string;
  adminKey: string;
  apiKeyIds?: readonly string[];
}

/**
 * Anthropic's Admin API reports over [from, to) (epoch ms, whole UTC days): tokens per day, model
 * and API key from GET /v1/organizations/usage_report/messages, cost per day and model from GET
 * /v1/organizations/cost_report grouped by description. Anthropic counts input without cache
 * reads and writes; the ledger's input holds both (OpenAI's sense), so they are added here. The
 * cost report's amounts are in cents, as decimal strings.
 */
export async function fetchAnthropicReport(o: AnthropicReportOptions, from: number, to: number): Promise<ReportRow[]> {
  const headers = { 'x-api-key': o.adminKey, 'anthropic-version': '2023-06-01' };
  const rows: ReportRow[] = [];
  const usageUrl = reportUrl(o.baseUrl, '/v1/organizations/usage_report/messages', ['model', 'api_key_id'], from, to);
  for (const id of o.apiKeyIds ?? []) usageUrl.searchParams.append('api_key_ids[]', id);
  for await (const bucket of pages('Anthropic usage report', usageUrl, headers, usagePage)) {
    for (const r of bucket.results) rows.push(usageRow(dayOf(Date.parse(bucket.starting_at)), r));
  }
  const costUrl = reportUrl(o.baseUrl, '/v1/organizations/cost_report', ['description'], from, to);
  for await (const bucket of pages('Anthropic cost report', costUrl, headers, costPage)) {
    for (const r of bucket.results) {
      const row = costRow(dayOf(Date.parse(bucket.starting_at)), r);
      if (row) rows.push(row);
    }
  }
  return rows;
}

/** A report's first page: whole days of [from, to), a bucket a day, grouped as asked. */
function reportUrl(baseUrl: string, path: string, groupBy: string[], from: number, to: number): URL {
  const url = new URL(path, baseUrl);
  url.searchParams.set('starting_at', new Date(from).toISOString());
  url.searchParams.set('ending_at', new Date(to).toISOString());
  url.searchParams.set('bucket_width', '1d');
  url.searchParams.set('limit', '31');
  for (const g of groupBy) url.searchParams.append('group_by[]', g);
  return url;
}

function usageRow(day: string, r: z.infer<typeof usagePage>['data'][number]['results'][number]): ReportRow {
  const cached = r.cache_read_input_tokens ?? 0;
  const written = (r.cache_creation?.ephemeral_5m_input_tokens ?? 0) + (r.cache_creation?.ephemeral_1h_input_tokens ?? 0);
  return {
    day,
    model: r.model ?? 'unknown',
    input: (r.uncached_input_tokens ?? 0) + cached + written,
    cached,
    output: r.output_tokens ?? 0,
    cost: 0,
    ...(r.api_key_id ? { key: r.api_key_id } : {}),
  };
}

/**
 * A token cost in USD (the amount is in cents); none for web search and code execution: billed
 * too, but no model's tokens, so the ledger has no row of them.
 */
function costRow(day: string, r: z.infer<typeof costPage>['data'][number]['results'][number]): ReportRow | undefined {
  if (r.cost_type !== undefined && r.cost_type !== null && r.cost_type !== 'tokens') return undefined;
  const cents = Number(r.amount);
  if (!Number.isFinite(cents) || cents === 0) return undefined;
  return { day, model: r.model ?? 'unknown', input: 0, cached: 0, output: 0, cost: cents / 100 };
}
