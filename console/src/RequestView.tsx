import { type ReactNode, useEffect, useState } from 'react';
import { api, formatMs, formatUsd, type PriceUsed, type RequestRecord } from './api.ts';
import { servedModel } from './model-label.ts';
import { KeyName, ProjectName } from './names.tsx';
import { PriceTable } from './PriceTable.tsx';
import { DataTable } from './DataTable.tsx';

function responseCacheText(outcome: string, savedUsd: number | null | undefined): string {
  if (outcome === 'hit') return `hit: answered from the cache, ${formatUsd(savedUsd ?? 0)} saved`;
  return outcome === 'miss' ? 'miss: answered upstream' : 'bypass: not served by the cache';
}

/** One request's ledger record: what was asked and served, its timings, tokens, cost and price. */
export function RequestView({ id, storeContent }: { id: string; storeContent: boolean }) {
  const [record, setRecord] = useState<RequestRecord>();
  const [price, setPrice] = useState<PriceUsed>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    setRecord(undefined);
    setPrice(undefined);
    setError(undefined);
    api<RequestRecord>(`/v1/requests/${encodeURIComponent(id)}`)
      .then((r) => {
        setRecord(r);
        return api<PriceUsed>(`/console/api/price/${encodeURIComponent(r.request_id)}`).then(setPrice);
      })
      .catch((err: Error) => setError(err.message));
  }, [id]);

  if (error)
    return (
      <section>
        <h1>Request {id}</h1>
        <p role="alert" className="error">
          {error}
        </p>
      </section>
    );
  if (!record) return <p>Loading…</p>;
  const r = record;
  const rows: [string, ReactNode][] = [
    ['Time', new Date(r.created_at).toLocaleString()],
    ['Outcome', r.outcome],
    ['Requested model', r.requested_model || '–'],
    ['Served by', servedModel(r) ?? 'none: refused before it was sent upstream'],
    ['Surface', `${r.surface}${r.streamed ? ' (streamed)' : ''}`],
    ['Key', <KeyName id={r.key_id} />],
    ['Project', <ProjectName id={r.project_id} />],
    ['TTFT', formatMs(r.ttft_ms)],
    ['Latency', formatMs(r.latency_ms)],
    ['sluice overhead', formatMs(r.overhead_ms)],
    ['Upstream status', r.upstream_status ?? '–'],
    ['Upstream request id', r.upstream_request_id ?? '–'],
    ['Finish reason', r.finish_reason ?? '–'],
  ];
  // The exact response cache (not the provider's prompt cache, whose tokens are under Tokens and cost).
  if (r.response_cache) rows.push(['Response cache', responseCacheText(r.response_cache, r.cache_saved_usd)]);
  return (
    <section aria-labelledby="request-title">
      <h1 id="request-title">Request {r.request_id}</h1>
      <dl className="facts">
        {rows.map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
      {r.error && (
        <>
          <h2>Error</h2>
          <p className="error">
            {r.error.type} / {r.error.code}: {r.error.message}
            {r.error.upstream && ` (upstream: ${r.error.upstream.type ?? '–'} / ${r.error.upstream.code ?? '–'})`}
          </p>
        </>
      )}
      <h2>Tokens and cost</h2>
      <dl className="facts">
        {Object.entries(r.usage).map(([k, v]) => (
          <div key={k}>
            <dt>{k.replaceAll('_', ' ')}</dt>
            <dd>{String(v)}</dd>
          </div>
        ))}
        <div>
          <dt>Cost</dt>
          <dd data-testid="cost">{r.price_known ? formatUsd(r.cost_usd) : 'unknown price (recorded as $0)'}</dd>
        </div>
        {r.billing && (
          <div>
            <dt>Billing</dt>
            <dd>{r.billing}</dd>
          </div>
        )}
      </dl>
      {price && <PriceTable price={price} />}
      {r.attempts && r.attempts.length > 0 && (
        <>
          <h2>Attempts</h2>
          <DataTable label="Attempts" columns={['#', 'Target', 'Upstream status', 'Error', 'Fallback reason', 'Latency']}>
            {r.attempts.map((a, i) => (
              <tr key={i}>
                <td>{i + 1}</td>
                <td>
                  {a.provider}/{a.model}
                </td>
                <td>{a.status ?? '–'}</td>
                <td>{a.error_code ?? '–'}</td>
                <td>{a.fallback_reason ?? '–'}</td>
                <td>{formatMs(a.latency_ms)}</td>
              </tr>
            ))}
          </DataTable>
        </>
      )}
      <h2>Bodies</h2>
      {storeContent || r.prompt || r.completion ? (
        <div className="bodies">
          <figure>
            <figcaption>Request</figcaption>
            <pre tabIndex={0} aria-label="Request body">
              {r.prompt ?? '(not stored)'}
            </pre>
          </figure>
          <figure>
            <figcaption>Response</figcaption>
            <pre tabIndex={0} aria-label="Response body">
              {r.completion ?? '(not stored)'}
            </pre>
          </figure>
        </div>
      ) : (
        <p>Not stored: storing bodies is off (ledger.store_content).</p>
      )}
    </section>
  );
}
