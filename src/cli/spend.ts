import { gatewayGet } from './gateway-get.ts';
import { OperatorError } from './operator-error.ts';

export interface SpendOptions {
  url: string;
  key: string | undefined;
  groupBy: string | undefined;
  period: string | undefined;
  from: string | undefined;
  to: string | undefined;
  csv: boolean;
}

interface Sums {
  requests: number;
  input_tokens: number;
  cached_share: number | null;
  output_tokens: number;
  cost_usd: number;
}

interface Report {
  period: string;
  from: string;
  to: string;
  totals: Sums;
  groups: (Sums & Record<string, unknown> & { totals: Sums })[];
}

/** A group's dimensions as one cell: a name beside its id, `-` for none (the master key, untagged). */
function describe(group: Record<string, unknown>): string {
  const parts: string[] = [];
  const named = (id: unknown, name: unknown) => (id === null ? '-' : name ? `${String(name)} (${String(id)})` : String(id));
  if ('project_id' in group) parts.push(`project ${named(group.project_id, group.project_name)}`);
  if ('key_id' in group) parts.push(`key ${named(group.key_id, group.key_name)}`);
  if ('model' in group) parts.push(String(group.model));
  if ('tag' in group) parts.push(`tag ${group.tag === null ? '-' : String(group.tag)}`);
  if ('provider_key' in group) parts.push(`provider key ${group.provider_key === null ? '-' : String(group.provider_key)}`);
  return parts.join('  ');
}

const line = (what: string, s: Sums) =>
  [
    what,
    `${s.requests} req`,
    `${s.input_tokens}->${s.output_tokens} tok`,
    ...(s.cached_share === null ? [] : [`${(s.cached_share * 100).toFixed(1)}% cached`]),
    `$${s.cost_usd.toFixed(6)}`,
  ].join('  ');

/**
 * `sluice spend`: a running gateway's spend report (GET /v1/spend), costliest group first and the
 * total last; `--csv` prints the report's CSV (a line per group and period) as the gateway sends it.
 */
export async function spend(options: SpendOptions): Promise<void> {
  const params = new URLSearchParams();
  if (options.groupBy) params.set('group_by', options.groupBy);
  if (options.period) params.set('period', options.period);
  if (options.from) params.set('from', options.from);
  if (options.to) params.set('to', options.to);
  if (options.csv) {
    params.set('format', 'csv');
    process.stdout.write(await gatewayGet(options.url, options.key, '/v1/spend', params));
    return;
  }
  let report: Report;
  try {
    report = JSON.parse(await gatewayGet(options.url, options.key, '/v1/spend', params)) as Report;
  } catch (err) {
    if (err instanceof OperatorError) throw err;
    throw new OperatorError(`${options.url} did not answer like sluice: is --url (or SLUICE_URL) right?`);
  }
  console.log(`spend by ${report.period} from ${report.from} to ${report.to}`);
  for (const g of report.groups) console.log(line(describe(g), g.totals));
  console.log(line('total', report.totals));
}
