import { type FormEvent, useEffect, useState } from 'react';
import { api, formatMs, formatUsd, type RequestPage, type RequestRecord } from './api.ts';
import { modelLabel } from './model-label.ts';
import { KeyName, ProjectName } from './names.tsx';
import { requestHref } from './route.ts';
import { DataTable } from './DataTable.tsx';

interface Filters {
  model: string;
  provider: string;
  key_id: string;
  project_id: string;
  outcome: string;
  since: string;
  until: string;
}

const NO_FILTERS: Filters = { model: '', provider: '', key_id: '', project_id: '', outcome: '', since: '', until: '' };
const PAGE = 50;

/** The filters as query parameters; times from the datetime-local inputs are the browser's local time. */
function params(filters: Filters): URLSearchParams {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) {
    if (!v) continue;
    out.set(k, k === 'since' || k === 'until' ? String(new Date(v).getTime()) : v);
  }
  return out;
}

/** The model that served the request, or the one a refused request asked for. */
function ModelCell({ record }: { record: RequestRecord }) {
  const { model, note } = modelLabel(record);
  return (
    <td data-testid="model">
      {model}
      {note && <span className="note"> ({note})</span>}
    </td>
  );
}

/**
 * The request log, newest first: a page from GET /v1/requests (keyset paging: "Older" follows
 * next_cursor), and every request stored since, pushed by the gateway over SSE.
 */
export function RequestLog() {
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [rows, setRows] = useState<RequestRecord[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string>();
  const [live, setLive] = useState(false);

  useEffect(() => {
    const query = params(filters);
    query.set('limit', String(PAGE));
    setError(undefined);
    let events: EventSource | undefined;
    let cancelled = false;
    api<RequestPage>(`/v1/requests?${query}`)
      .then((page) => {
        if (cancelled) return;
        setRows(page.data);
        setNext(page.next_cursor);
        // New requests arrive live unless the view ends in the past; from where this page was read, so none is missed.
        if (filters.until) return;
        const live = params(filters);
        live.delete('since');
        live.set('after', page.follow_cursor);
        events = new EventSource(`/console/api/events?${live}`);
        events.onopen = () => setLive(true);
        events.onerror = () => setLive(false);
        events.addEventListener('request', (e) => {
          const record = JSON.parse((e as MessageEvent<string>).data) as RequestRecord;
          setRows((old) => (old.some((r) => r.request_id === record.request_id) ? old : [record, ...old]));
        });
      })
      .catch((err: Error) => setError(err.message));
    return () => {
      cancelled = true;
      events?.close();
      setLive(false);
    };
  }, [filters]);

  async function older() {
    if (!next) return;
    const query = params(filters);
    query.set('limit', String(PAGE));
    query.set('cursor', next);
    try {
      const page = await api<RequestPage>(`/v1/requests?${query}`);
      setRows((old) => [...old, ...page.data]);
      setNext(page.next_cursor);
    } catch (err) {
      setError((err as Error).message);
    }
  }

  const apply = (e: FormEvent) => {
    e.preventDefault();
    setFilters(draft);
  };
  const field = (name: keyof Filters, label: string, type = 'text') => (
    <label>
      {label}
      <input type={type} name={name} value={draft[name]} onChange={(e) => setDraft({ ...draft, [name]: e.target.value })} />
    </label>
  );

  return (
    <section aria-labelledby="log-title">
      <div className="row">
        <h1 id="log-title">Requests</h1>
        <span className={live ? 'badge live' : 'badge'} role="status">
          {live ? 'live' : 'not live'}
        </span>
      </div>
      <form className="filters" onSubmit={apply} aria-label="Filters">
        {field('model', 'Model')}
        {field('provider', 'Provider')}
        {field('key_id', 'Key')}
        {field('project_id', 'Project')}
        <label>
          Outcome
          <select value={draft.outcome} onChange={(e) => setDraft({ ...draft, outcome: e.target.value })}>
            <option value="">any</option>
            <option value="ok">ok</option>
            <option value="error">error</option>
            <option value="cancelled">cancelled</option>
            <option value="interrupted">interrupted</option>
          </select>
        </label>
        {field('since', 'Since', 'datetime-local')}
        {field('until', 'Until', 'datetime-local')}
        <button type="submit">Apply</button>
        <button
          type="button"
          onClick={() => {
            setDraft(NO_FILTERS);
            setFilters(NO_FILTERS);
          }}
        >
          Clear
        </button>
      </form>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <DataTable
        label="Requests"
        className="log"
        columns={['Time', 'Request', 'Model', 'Key / project', 'Outcome', 'Tokens in → out', 'Cost', 'TTFT', 'Latency']}
      >
        {rows.map((r) => (
          <tr key={r.request_id} className={r.outcome}>
            <td>{new Date(r.created_at).toLocaleTimeString()}</td>
            <td>
              <a href={requestHref(r.request_id)}>{r.request_id}</a>
            </td>
            <ModelCell record={r} />
            <td>
              <KeyName id={r.key_id} />
              {r.key_id && (
                <>
                  {' / '}
                  <ProjectName id={r.project_id} />
                </>
              )}
            </td>
            <td>{r.outcome === 'ok' ? 'ok' : `${r.outcome}${r.error ? `: ${r.error.code}` : ''}`}</td>
            <td>
              {r.usage.input_tokens} → {r.usage.output_tokens}
              {r.usage.estimated ? ' (est.)' : ''}
            </td>
            <td>{r.price_known ? formatUsd(r.cost_usd) : 'unpriced'}</td>
            <td>{formatMs(r.ttft_ms)}</td>
            <td>{formatMs(r.latency_ms)}</td>
          </tr>
        ))}
      </DataTable>
      {rows.length === 0 && !error && <p>No requests yet.</p>}
      {next && (
        <button type="button" onClick={() => void older()}>
          Older
        </button>
      )}
    </section>
  );
}
