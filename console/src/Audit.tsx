import { type FormEvent, useEffect, useState } from 'react';
import { api, type AuditEntry, type AuditPage } from './api.ts';
import { DataTable } from './DataTable.tsx';

interface Filters {
  actor: string;
  action: string;
  target_type: string;
  target_id: string;
  from: string;
  to: string;
}

const NO_FILTERS: Filters = { actor: '', action: '', target_type: '', target_id: '', from: '', to: '' };
const PAGE = 50;

/** The filters as query parameters; times from the datetime-local inputs are the browser's local time. */
function params(filters: Filters): URLSearchParams {
  const out = new URLSearchParams({ limit: String(PAGE) });
  for (const [k, v] of Object.entries(filters)) {
    if (!v) continue;
    out.set(k, k === 'from' || k === 'to' ? String(new Date(v).getTime()) : v);
  }
  return out;
}

function actorOf(e: AuditEntry): string {
  if (e.actor.kind === 'key') return `key ${e.actor.id}${e.actor.name ? ` (${e.actor.name})` : ''}`;
  return e.actor.id ?? e.actor.kind;
}

/** `field: before → after` per changed field; a creation's fields as they are; a refusal's code. */
function changesOf(e: AuditEntry): string {
  if (e.error_code) return `refused: ${e.error_code}`;
  const fields = [...new Set([...Object.keys(e.before ?? {}), ...Object.keys(e.after ?? {})])];
  const shown = (side: Record<string, unknown> | null, f: string) => JSON.stringify(side?.[f] ?? null);
  return fields
    .map((f) => (e.before === null ? `${f}: ${shown(e.after, f)}` : `${f}: ${shown(e.before, f)} → ${shown(e.after, f)}`))
    .join('\n');
}

/** The audit log, newest first: GET /admin/audit with its filters, keyset paging ("Older" follows next_cursor). */
export function Audit() {
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [rows, setRows] = useState<AuditEntry[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string>();

  useEffect(() => {
    let cancelled = false;
    setError(undefined);
    api<AuditPage>(`/admin/audit?${params(filters)}`)
      .then((page) => {
        if (cancelled) return;
        setRows(page.data);
        setNext(page.next_cursor);
      })
      .catch((err: Error) => setError(err.message));
    return () => {
      cancelled = true;
    };
  }, [filters]);

  async function older() {
    if (!next) return;
    const query = params(filters);
    query.set('cursor', next);
    try {
      const page = await api<AuditPage>(`/admin/audit?${query}`);
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
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit log</h1>
      <form className="filters" onSubmit={apply} aria-label="Filters">
        {field('actor', 'Actor')}
        {field('action', 'Action')}
        {field('target_type', 'Target type')}
        {field('target_id', 'Target')}
        {field('from', 'From', 'datetime-local')}
        {field('to', 'To', 'datetime-local')}
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
        label="Audit entries"
        className="log"
        columns={['Time', 'Actor', 'Action', 'Target', 'Changes', 'Client', 'Request']}
      >
        {rows.map((e) => (
          <tr key={e.id} className={e.error_code ? 'error' : undefined}>
            <td>{new Date(e.created_at).toLocaleString()}</td>
            <td>{actorOf(e)}</td>
            <td>{e.action}</td>
            <td>{e.target.id === null ? e.target.type : `${e.target.type} ${e.target.id}`}</td>
            <td className="changes">{changesOf(e)}</td>
            <td>{e.client_address ?? '–'}</td>
            <td>{e.request_id}</td>
          </tr>
        ))}
      </DataTable>
      {rows.length === 0 && !error && <p>No entries.</p>}
      {next && (
        <button type="button" onClick={() => void older()}>
          Older
        </button>
      )}
    </section>
  );
}
