import { useEffect, useRef, useState } from 'react';
import uPlot, { type AlignedData, type Options } from 'uplot';
import { api, type Stats } from './api.ts';

const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#ca8a04', '#db2777'];
const REFRESH_MS = 15_000;

/** One uPlot chart of several series over the stats' periods. */
function Chart({
  title,
  times,
  series,
  unit,
}: {
  title: string;
  times: number[];
  series: [string, (number | null)[]][];
  unit: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!box.current) return;
    const options: Options = {
      // The box's width, a phone's included (the grid gives each chart the row when it is narrow).
      width: Math.max(200, box.current.clientWidth),
      height: 220,
      // Points as well as lines: a period with data between empty periods (null) is a lone point.
      series: [
        {},
        // Every series named: uPlot calls an unnamed one "Value".
        ...series.map(([label], i) => ({
          label: label || 'unnamed',
          stroke: COLORS[i % COLORS.length],
          width: 2,
          points: { show: true, size: 5 },
        })),
      ],
      axes: [{}, { label: unit, size: 70, values: (_: uPlot, ticks: number[]) => ticks.map(formatTick) }],
      // A share (error rate) is drawn from 0 to 1 whatever it holds.
      scales: { x: { time: true }, ...(unit === 'share' && { y: { range: [0, 1] } }) },
    };
    const plot = new uPlot(options, [times, ...series.map(([, values]) => values)] as AlignedData, box.current);
    return () => plot.destroy();
  }, [times, series, unit]);
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} role="img" aria-label={`${title}: ${series.map(([label]) => label).join(', ') || 'no data'}`} />
    </figure>
  );
}

/** Small values (costs) keep their significant digits: "0.00011", not "0". */
function formatTick(v: number): string {
  return v === 0 || Math.abs(v) >= 1 ? String(Math.round(v * 100) / 100) : String(Number(v.toPrecision(2)));
}

/** The ranges offered: up to a day per minute, longer per hour (the gateway keeps per-minute rollups 48 hours). */
const RANGES = [
  { query: 'minutes=15', label: '15 minutes', per: 'minute' },
  { query: 'minutes=60', label: '1 hour', per: 'minute' },
  { query: 'minutes=360', label: '6 hours', per: 'minute' },
  { query: 'minutes=1440', label: '24 hours', per: 'minute' },
  { query: 'hours=168', label: '7 days', per: 'hour' },
  { query: 'hours=720', label: '30 days', per: 'hour' },
  { query: 'hours=2160', label: '90 days', per: 'hour' },
] as const;

/** The charts, read from the gateway's per-minute or per-hour rollups (GET /console/api/stats), refreshed every 15 s. */
export function Charts() {
  const [range, setRange] = useState<(typeof RANGES)[number]>(RANGES[1]);
  const [stats, setStats] = useState<Stats>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    const load = () =>
      api<Stats>(`/console/api/stats?${range.query}`)
        .then((s) => {
          setStats(s);
          setError(undefined);
        })
        .catch((err: Error) => setError(err.message));
    void load();
    const timer = setInterval(load, REFRESH_MS);
    return () => clearInterval(timer);
  }, [range]);

  const byModel = (pick: 'requests' | 'tokens' | 'cost'): [string, number[]][] =>
    stats ? Object.entries(stats.by_model).map(([name, s]) => [name, s[pick]]) : [];
  return (
    <section aria-labelledby="charts-title">
      <div className="row">
        <h1 id="charts-title">Charts</h1>
        <label>
          Window
          <select value={range.query} onChange={(e) => setRange(RANGES.find((r) => r.query === e.target.value) ?? RANGES[1])}>
            {RANGES.map((r) => (
              <option key={r.query} value={r.query}>
                {r.label} (per {r.per})
              </option>
            ))}
          </select>
        </label>
        {stats && (
          <span className="badge" data-testid="open-streams">
            open streams now: {stats.open_streams}
          </span>
        )}
      </div>
      <p className="note">
        Per-minute (up to 24 hours) or per-hour rollups in the store, written with the ledger's rows by every sluice process;
        percentiles are histogram bucket upper bounds. A legend lists the busiest models (or providers) by requests and sums the
        rest as other.
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {stats && (
        <div className="charts">
          <Chart
            title={`Requests per ${stats.period} by model`}
            times={stats.times}
            series={byModel('requests')}
            unit="requests"
          />
          <Chart title={`Tokens per ${stats.period} by model`} times={stats.times} series={byModel('tokens')} unit="tokens" />
          <Chart title={`Cost per ${stats.period} by model`} times={stats.times} series={byModel('cost')} unit="USD" />
          <Chart
            title="Error rate by provider"
            times={stats.times}
            series={Object.entries(stats.by_provider).map(([name, p]) => [name, p.error_rate])}
            unit="share"
          />
          <Chart
            title="TTFT percentiles"
            times={stats.times}
            series={(['p50', 'p95', 'p99'] as const).map((p) => [p, stats.ttft_ms[p]])}
            unit="ms"
          />
          <Chart
            title="Latency percentiles"
            times={stats.times}
            series={(['p50', 'p95', 'p99'] as const).map((p) => [p, stats.latency_ms[p]])}
            unit="ms"
          />
        </div>
      )}
    </section>
  );
}
