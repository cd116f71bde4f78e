import { setTimeout as sleep } from 'node:timers/promises';

export interface LogsOptions {
  url: string;
  key: string | undefined;
  limit: number;
  follow: boolean;
  filters: Record<string, string | undefined>;
}

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

function line(r: LoggedRequest): string {
  const tokens = `${r.usage.input_tokens}->${r.usage.output_tokens}${r.usage.estimated ? '~' : ''}`;
  const ttft = r.ttft_ms === null ? '-' : `${r.ttft_ms}ms`;
  const what = r.outcome === 'ok' ? 'ok' : `${r.outcome}${r.error ? `:${r.error.code}` : ''}`;
  return [r.created_at, r.request_id, `${r.provider}/${r.model}`, what, tokens, `$${r.cost_usd.toFixed(6)}`, `ttft ${ttft}`, `${r.latency_ms}ms`].join('  ');
}

async function fetchPage(options: LogsOptions, extra: Record<string, string>): Promise<LoggedRequest[]> {
  const params = new URLSearchParams({ limit: String(options.limit), ...extra });
  for (const [k, v] of Object.entries(options.filters)) if (v) params.set(k, v);
  const res = await fetch(`${options.url.replace(/\/+$/, '')}/v1/requests?${params}`, {
    headers: options.key ? { authorization: `Bearer ${options.key}` } : {},
  });
  const body = (await res.json()) as { data?: LoggedRequest[]; error?: { message: string } };
  if (!res.ok) throw new Error(body.error?.message ?? `HTTP ${res.status}`);
  return body.data ?? [];
}

/** `sluice logs [--follow]`: the recent requests of a running gateway, from its request log. */
export async function logs(options: LogsOptions): Promise<void> {
  const recent = await fetchPage(options, {});
  for (const r of [...recent].reverse()) console.log(line(r));
  if (!options.follow) return;
  const seen = new Set(recent.map((r) => r.request_id));
  let since = recent.length > 0 ? Date.parse(recent[0].created_at) : Date.now();
  // Polling keeps this working against any instance, embedded store or Postgres alike.
  for (;;) {
    await sleep(1000);
    const page = await fetchPage(options, { since: String(since) });
    for (const r of [...page].reverse()) {
      if (seen.has(r.request_id)) continue;
      seen.add(r.request_id);
      console.log(line(r));
      since = Math.max(since, Date.parse(r.created_at));
    }
  }
}
