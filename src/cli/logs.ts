import { setTimeout as sleep } from 'node:timers/promises';
import { gatewayGet } from './gateway-get.ts';
import { OperatorError } from './operator-error.ts';

export interface LogsOptions {
  url: string;
  key: string | undefined;
  limit: number;
  follow: boolean;
  filters: Record<string, string | undefined>;
}

/** Between two polls of a follower that has read everything. */
const POLL_MS = 1000;

interface LoggedRequest {
  request_id: string;
  created_at: string;
  provider: string;
  model: string;
  outcome: string;
  usage: { input_tokens: number; output_tokens: number; estimated: boolean };
  cost_usd: number;
  ttft_ms: number | null;
  latency_ms: number;
  error: { code: string } | null;
}

interface Page {
  data: LoggedRequest[];
  has_more: boolean;
  next_cursor: string | null;
  follow_cursor?: string;
}

function line(r: LoggedRequest): string {
  const tokens = `${r.usage.input_tokens}->${r.usage.output_tokens}${r.usage.estimated ? '~' : ''}`;
  const ttft = r.ttft_ms === null ? '-' : `${r.ttft_ms}ms`;
  const what = r.outcome === 'ok' ? 'ok' : `${r.outcome}${r.error ? `:${r.error.code}` : ''}`;
  return [
    r.created_at,
    r.request_id,
    `${r.provider}/${r.model}`,
    what,
    tokens,
    `$${r.cost_usd.toFixed(6)}`,
    `ttft ${ttft}`,
    `${r.latency_ms}ms`,
  ].join('  ');
}

/** One GET /v1/requests. */
async function fetchPage(options: LogsOptions, extra: Record<string, string>): Promise<Page> {
  const params = new URLSearchParams({ limit: String(options.limit), ...extra });
  for (const [k, v] of Object.entries(options.filters)) if (v) params.set(k, v);
  const text = await gatewayGet(options.url, options.key, '/v1/requests', params);
  try {
    return JSON.parse(text) as Page;
  } catch {
    throw new OperatorError(`${options.url} did not answer like sluice: is --url (or SLUICE_URL) right?`);
  }
}

/**
 * `sluice logs [--follow]`: the recent requests of a running gateway, then (following) every
 * request as it ends. Following reads the log in write order from a cursor, not the newest page:
 * a burst larger than a page, or a long stream that ends after newer rows were shown, is
 * still printed, once. Polling keeps this working against any instance, SQLite or Postgres.
 */
export async function logs(options: LogsOptions): Promise<void> {
  const recent = await fetchPage(options, {});
  for (const r of recent.data.toReversed()) console.log(line(r));
  if (!options.follow) return;
  if (!recent.follow_cursor) throw new OperatorError(`the gateway at ${options.url} is too old for --follow (no follow_cursor).`);
  // The recent page may hold records written after its follow cursor: they come again once.
  const printed = new Set(recent.data.map((r) => r.request_id));
  let after = recent.follow_cursor;
  for (;;) {
    const page = await fetchPage(options, { order: 'asc', after });
    for (const r of page.data) {
      if (printed.delete(r.request_id)) continue;
      console.log(line(r));
    }
    after = page.next_cursor ?? after;
    if (!page.has_more) await sleep(POLL_MS);
  }
}
