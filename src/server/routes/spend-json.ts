import type { SpendReport, SpendSums } from '../../store/spend-report.ts';
import type { SpendQuery } from './spend-query.ts';

/** Names beside ids: a project's and a key's, as the admin API lists them. */
export interface SpendNames {
  projects: Map<string, string>;
  keys: Map<string, string | null>;
}

/** The sums as the API names them, with the share of input tokens the provider's prompt cache answered (null: no input). */
export function sumsJson(s: SpendSums): Record<string, number | null> {
  return {
    requests: s.requests,
    errors: s.errors,
    input_tokens: s.inputTokens,
    cached_input_tokens: s.cachedInputTokens,
    cached_share: cachedShare(s),
    output_tokens: s.outputTokens,
    cost_usd: s.costUsd,
  };
}

/** Cached input tokens over input tokens, to 4 decimals; null without input. */
export function cachedShare(s: SpendSums): number | null {
  return s.inputTokens > 0 ? Math.round((s.cachedInputTokens / s.inputTokens) * 10_000) / 10_000 : null;
}

const iso = (t: number) => new Date(t).toISOString();

export function reportJson(report: SpendReport, query: SpendQuery, names: SpendNames): Record<string, unknown> {
  return {
    object: 'sluice.spend',
    period: query.period,
    from: iso(query.filter.from),
    to: iso(query.filter.to),
    group_by: query.groupBy,
    totals: sumsJson(report.totals),
    series: report.series.map((p) => ({ start: iso(p.start), ...sumsJson(p.sums) })),
    groups: report.groups.map((g) => ({
      ...groupColumns(g.key, names),
      totals: sumsJson(g.sums),
      series: g.series.map((p) => ({ start: iso(p.start), ...sumsJson(p.sums) })),
    })),
  };
}

/** A group's dimensions as the API names them: '' (the master key's, untagged) is null; names beside ids. */
export function groupColumns(key: SpendReport['groups'][number]['key'], names: SpendNames): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  const id = (v: string) => (v === '' ? null : v);
  if (key.project !== undefined) {
    out.project_id = id(key.project);
    out.project_name = names.projects.get(key.project) ?? null;
  }
  if (key.key !== undefined) {
    out.key_id = id(key.key);
    out.key_name = names.keys.get(key.key) ?? null;
  }
  if (key.model !== undefined) out.model = key.model;
  if (key.tag !== undefined) out.tag = id(key.tag);
  if (key.provider_key !== undefined) out.provider_key = id(key.provider_key);
  return out;
}
