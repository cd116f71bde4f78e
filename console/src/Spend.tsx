import { useEffect, useMemo, useRef, useState } from 'react';
import uPlot, { type AlignedData, type Options } from 'uplot';
import { api, formatUsd } from './api.ts';
import { DataTable } from './DataTable.tsx';

/** GET /v1/spend's answer (docs/governance/spend.md). */
interface Sums {
  requests: number;
  errors: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}
interface SpendGroup {
  project_id?: string | null;
  project_name?: string | null;
  key_id?: string | null;
  key_name?: string | null;
  model?: string;
  tag?: string | null;
  provider_key?: string | null;
  totals: Sums;
  series: (Sums & { start: string })[];
}
interface SpendReport {
  period: 'hour' | 'day' | 'month';
  from: string;
  to: string;
  totals: Sums;
  series: (Sums & { start: string })[];
  groups: SpendGroup[];
}
/** GET /v1/spend/budgets' lines. */
interface BurnDown {
  scope: 'key' | 'project';
  id: string;
  name: string | null;
  project_id: string;
  period: 'day' | 'month';
  limit_usd: number;
  spent_usd: number;
  remaining_usd: number;
  resets_at: string;
  elapsed: number;
  projected_usd: number | null;
}

const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#ca8a04', '#db2777'];
/** Groups drawn one line each; the table lists them all. */
const CHARTED = COLORS.length;
const GROUPINGS = ['', 'project', 'key', 'model', 'tag', 'provider_key'] as const;

/** A name beside its id ("-" for the master key's requests, or untagged ones). */
function named(id: string | null | undefined, name: string | null | undefined): string {
  if (id === null || id === undefined) return '–';
  return name ? `${name} (${id})` : id;
}

function groupLabel(g: SpendGroup): string {
  const parts: string[] = [];
  if ('project_id' in g) parts.push(named(g.project_id, g.project_name));
  if ('key_id' in g) parts.push(named(g.key_id, g.key_name));
  if (g.model !== undefined) parts.push(g.model);
  if ('tag' in g) parts.push(g.tag ?? 'untagged');
  if ('provider_key' in g) parts.push(g.provider_key ?? 'no key pool');
  return parts.join(' · ');
}

/** Cost per period: the total, or each of the costliest groups. */
function CostChart({ report }: { report: SpendReport }) {
  const box = useRef<HTMLDivElement>(null);
  const times = useMemo(() => report.series.map((p) => Date.parse(p.start) / 1000), [report]);
  const lines = useMemo((): [string, number[]][] => {
    if (report.groups.length === 0) return [['total', report.series.map((p) => p.cost_usd)]];
    return report.groups.slice(0, CHARTED).map((g) => {
      const byStart = new Map(g.series.map((p) => [p.start, p.cost_usd]));
      return [groupLabel(g), report.series.map((p) => byStart.get(p.start) ?? 0)];
    });
  }, [report]);
  useEffect(() => {
    if (!box.current) return;
    const options: Options = {
      // The box's width, a phone's included.
      width: Math.max(200, box.current.clientWidth),
      height: 240,
      series: [
        {},
        ...lines.map(([label], i) => ({ label, stroke: COLORS[i % COLORS.length], width: 2, points: { show: true, size: 5 } })),
      ],
      axes: [{}, { label: 'USD', size: 80, values: (_: uPlot, ticks: number[]) => ticks.map((t) => formatUsd(t)) }],
      scales: { x: { time: true } },
    };
    const plot = new uPlot(options, [times, ...lines.map(([, values]) => values)] as AlignedData, box.current);
    return () => plot.destroy();
  }, [times, lines]);
  return (
    <figure className="chart">
      <figcaption>Cost per {report.period}</figcaption>
      <div ref={box} role="img" aria-label={`Cost per ${report.period}: ${lines.map(([label]) => label).join(', ')}`} />
    </figure>
  );
}

/** Each budget's window: spent against its limit, and where the pace so far ends. */
function BurnDowns({ budgets }: { budgets: BurnDown[] }) {
  if (budgets.length === 0) return <p className="note">No key or project has a budget.</p>;
  return (
    <DataTable label="Budgets" columns={['Budget of', 'Window', 'Spent / limit', 'Used', 'At this pace', 'Resets']}>
      {budgets.map((b) => (
        <tr key={`${b.scope}:${b.id}:${b.period}`}>
          <td>
            {b.scope} {named(b.id, b.name)}
          </td>
          <td>{b.period}</td>
          <td>
            {formatUsd(b.spent_usd)} / {formatUsd(b.limit_usd)}
          </td>
          <td>
            <meter
              aria-label={`${b.scope} ${b.id} ${b.period} budget used`}
              min={0}
              max={b.limit_usd}
              low={b.limit_usd * b.elapsed}
              high={b.limit_usd * 0.9}
              value={b.spent_usd}
            >
              {Math.round((b.spent_usd / b.limit_usd) * 100)}%
            </meter>
          </td>
          <td className={b.projected_usd !== null && b.projected_usd > b.limit_usd ? 'error' : undefined}>
            {b.projected_usd === null ? '–' : formatUsd(b.projected_usd)}
          </td>
          <td>{new Date(b.resets_at).toLocaleString()}</td>
        </tr>
      ))}
    </DataTable>
  );
}

/** The spend report (GET /v1/spend, from the hourly and daily rollups) and the budgets' burn-down. */
export function Spend() {
  const [period, setPeriod] = useState<SpendReport['period']>('day');
  const [groupBy, setGroupBy] = useState<(typeof GROUPINGS)[number]>('project');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [report, setReport] = useState<SpendReport>();
  const [budgets, setBudgets] = useState<BurnDown[]>();
  const [error, setError] = useState<string>();

  const query = useMemo(() => {
    const q = new URLSearchParams({ period });
    if (groupBy) q.set('group_by', groupBy);
    if (from) q.set('from', from);
    if (to) q.set('to', to);
    return q.toString();
  }, [period, groupBy, from, to]);

  useEffect(() => {
    api<SpendReport>(`/v1/spend?${query}`)
      .then((r) => {
        setReport(r);
        setError(undefined);
      })
      .catch((err: Error) => setError(err.message));
  }, [query]);
  useEffect(() => {
    api<{ data: BurnDown[] }>('/v1/spend/budgets')
      .then((b) => setBudgets(b.data))
      .catch((err: Error) => setError(err.message));
  }, []);

  return (
    <section aria-labelledby="spend-title">
      <div className="row">
        <h1 id="spend-title">Spend</h1>
        <label>
          Per
          <select value={period} onChange={(e) => setPeriod(e.target.value as SpendReport['period'])}>
            <option value="hour">hour</option>
            <option value="day">day</option>
            <option value="month">month</option>
          </select>
        </label>
        <label>
          Group by
          <select value={groupBy} onChange={(e) => setGroupBy(e.target.value as (typeof GROUPINGS)[number])}>
            {GROUPINGS.map((g) => (
              <option key={g} value={g}>
                {g || 'nothing (total)'}
              </option>
            ))}
          </select>
        </label>
        <label>
          From
          <input type="date" value={from} onChange={(e) => setFrom(e.target.value)} />
        </label>
        <label>
          To
          <input type="date" value={to} onChange={(e) => setTo(e.target.value)} />
        </label>
        <a href={`/v1/spend?${query}&format=csv`} download={`sluice-spend-${period}.csv`}>
          Download CSV
        </a>
      </div>
      <p className="note">
        From the store's hourly and daily rollups (UTC). Grouped by tag, a request with several tags counts in each; the totals
        count it once.
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {report && (
        <>
          <p data-testid="spend-totals">
            {new Date(report.from).toLocaleDateString()} – {new Date(report.to).toLocaleDateString()}:{' '}
            <strong>{formatUsd(report.totals.cost_usd)}</strong>, {report.totals.requests} requests ({report.totals.errors}{' '}
            failed), {report.totals.input_tokens} tokens in, {report.totals.output_tokens} out
          </p>
          <div className="charts">
            <CostChart report={report} />
          </div>
          {report.groups.length > 0 && (
            <DataTable label="Spend by group" columns={[groupBy, 'Requests', 'Tokens in / out', 'Cost']}>
              {report.groups.map((g) => (
                <tr key={groupLabel(g)}>
                  <td>{groupLabel(g)}</td>
                  <td>{g.totals.requests}</td>
                  <td>
                    {g.totals.input_tokens} / {g.totals.output_tokens}
                  </td>
                  <td>{formatUsd(g.totals.cost_usd)}</td>
                </tr>
              ))}
            </DataTable>
          )}
        </>
      )}
      <h2>Budgets: burn-down</h2>
      {budgets && <BurnDowns budgets={budgets} />}
    </section>
  );
}
