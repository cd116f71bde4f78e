import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { api, formatUsd, postJson, type Reconciliation } from './api.ts';
import { DataTable } from './DataTable.tsx';

const pct = (r: number) => `${(r * 100).toFixed(2)}%`;
const yesterday = () => new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);

/** One run's lines: both sides per day and model, the drift, and why it is over. */
function RunDetail({ run }: { run: Reconciliation }) {
  return (
    <div>
      {run.error && (
        <p role="alert" className="error">
          {run.error}
        </p>
      )}
      {run.reasons.length > 0 && (
        <ul aria-label={`Why ${run.provider} ${run.from} to ${run.to} is over`}>
          {run.reasons.map((r) => (
            <li key={r}>{r}</li>
          ))}
        </ul>
      )}
      {run.notes.map((n) => (
        <p key={n}>{n}</p>
      ))}
      <DataTable
        label={`Lines of ${run.id}`}
        className="log"
        columns={[
          'Day',
          'Model',
          'Requests',
          'Input (ledger / report)',
          'Cached',
          'Output',
          'Cost (ledger / report)',
          'Drift',
          'Status',
        ]}
      >
        {run.lines.map((l) => (
          <tr key={`${l.day} ${l.model}`} className={l.over ? 'error' : undefined}>
            <td>{l.day}</td>
            <td>{l.keys.length > 0 ? `${l.model} (${l.keys.join(', ')})` : l.model}</td>
            <td>{l.ledger.requests}</td>
            <td>
              {l.ledger.input} / {l.report.input}
            </td>
            <td>
              {l.ledger.cached} / {l.report.cached}
            </td>
            <td>
              {l.ledger.output} / {l.report.output}
            </td>
            <td>
              {formatUsd(l.ledger.cost)} / {formatUsd(l.report.cost)}
            </td>
            <td>
              {formatUsd(l.drift.cost)} ({pct(l.relative.cost)})
            </td>
            <td>{l.status.replaceAll('_', ' ')}</td>
          </tr>
        ))}
      </DataTable>
    </div>
  );
}

/**
 * The ledger against the providers' own reports: the stored runs, newest first (GET
 * /admin/reconciliations), one opened to its lines, and a run asked for over a range of days
 * (POST /admin/reconciliations).
 */
export function Reconcile() {
  const [runs, setRuns] = useState<Reconciliation[]>([]);
  const [open, setOpen] = useState<string>();
  const [error, setError] = useState<string>();
  const [running, setRunning] = useState(false);
  const [draft, setDraft] = useState({ provider: '', from: yesterday(), to: yesterday() });

  const load = useCallback(() => {
    api<{ data: Reconciliation[] }>('/admin/reconciliations?limit=50')
      .then((page) => setRuns(page.data))
      .catch((err: Error) => setError(err.message));
  }, []);
  useEffect(load, [load]);

  async function run(e: FormEvent) {
    e.preventDefault();
    setError(undefined);
    setRunning(true);
    try {
      const result = await postJson<Reconciliation>('/admin/reconciliations', draft);
      setOpen(result.id);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setRunning(false);
      load();
    }
  }
  const field = (name: keyof typeof draft, label: string, type = 'text') => (
    <label>
      {label}
      <input
        type={type}
        name={name}
        required
        value={draft[name]}
        onChange={(e) => setDraft({ ...draft, [name]: e.target.value })}
      />
    </label>
  );

  return (
    <section aria-labelledby="reconcile-title">
      <h1 id="reconcile-title">Reconciliation</h1>
      <form className="filters" onSubmit={(e) => void run(e)} aria-label="Reconcile">
        {field('provider', 'Provider')}
        {field('from', 'From', 'date')}
        {field('to', 'To', 'date')}
        <button type="submit" disabled={running}>
          {running ? 'Reconciling…' : 'Reconcile'}
        </button>
      </form>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <DataTable
        label="Reconciliations"
        className="log"
        columns={['Time', 'Provider', 'Days', 'Trigger', 'Status', 'Cost (ledger / report)', 'Drift', 'Lines']}
      >
        {runs.map((r) => (
          <tr key={r.id} className={r.status === 'ok' ? undefined : 'error'}>
            <td>{new Date(r.created_at).toLocaleString()}</td>
            <td>{r.provider}</td>
            <td>{r.from === r.to ? r.from : `${r.from} to ${r.to}`}</td>
            <td>{r.trigger}</td>
            <td>{r.status}</td>
            <td>{r.totals ? `${formatUsd(r.totals.ledger.cost)} / ${formatUsd(r.totals.report.cost)}` : '–'}</td>
            <td>{r.totals ? `${formatUsd(r.totals.drift.cost)} (${pct(r.totals.relative.cost)})` : '–'}</td>
            <td>
              <button type="button" aria-expanded={open === r.id} onClick={() => setOpen(open === r.id ? undefined : r.id)}>
                {open === r.id ? 'Hide' : 'Show'} {r.provider} {r.from}
              </button>
            </td>
          </tr>
        ))}
      </DataTable>
      {runs.length === 0 && !error && <p>No reconciliations yet.</p>}
      {runs
        .filter((r) => r.id === open)
        .map((r) => (
          <RunDetail key={r.id} run={r} />
        ))}
    </section>
  );
}
