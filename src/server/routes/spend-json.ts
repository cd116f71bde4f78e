import type { SpendReport, SpendSums } from '../../store/spend-report.ts';
import type { SpendQuery } from './spend-query.ts';

/** Names beside ids: a project's and a key's, as the admin API lists them. */
export interface SpendNames {
  projects: Map<string, string>;
  keys: Map<string, string | null>;
}

export function sumsJson(s: SpendSums): Record<string, number> {
  return {
    requests: s.requests,
    errors: s.errors,
    input_tokens: s.inputTokens,
    output_tokens: s.outputTokens,
    cost_usd: s.costUsd,
  };
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
  return out;
}
