import { call, connect, printJson } from './admin-call.ts';
import { integerFlag, parseFlags } from './parse-flags.ts';
import { usage } from './usage.ts';

/** An entry as GET /admin/audit answers it (server/routes/audit.ts), as far as the command reads it. */
interface AuditEntryJson {
  created_at: string;
  actor: { kind: string; id: string | null; name: string | null };
  action: string;
  target: { type: string; id: string | null };
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  request_id: string;
  client_address: string | null;
  error_code: string | null;
}

/** The flags that become GET /admin/audit's filters, by the parameter each sets. */
const FILTERS = {
  actor: 'actor',
  action: 'action',
  'target-type': 'target_type',
  'target-id': 'target_id',
  from: 'from',
  to: 'to',
} as const;

function who(actor: AuditEntryJson['actor']): string {
  if (actor.kind === 'key') return `key ${actor.id}${actor.name ? ` (${actor.name})` : ''}`;
  return actor.id ?? actor.kind;
}

/** `field: before -> after` for each changed field; a creation's fields as they are. */
function changes(e: AuditEntryJson): string {
  const fields = new Set([...Object.keys(e.before ?? {}), ...Object.keys(e.after ?? {})]);
  const shown = (side: Record<string, unknown> | null, f: string) => (side === null ? '-' : JSON.stringify(side[f] ?? null));
  return [...fields]
    .map((f) => (e.before === null ? `${f}=${shown(e.after, f)}` : `${f}: ${shown(e.before, f)} -> ${shown(e.after, f)}`))
    .join(', ');
}

function line(e: AuditEntryJson): string {
  const target = e.target.id === null ? e.target.type : `${e.target.type} ${e.target.id}`;
  const outcome = e.error_code ? `refused:${e.error_code}` : changes(e);
  return [e.created_at, who(e.actor), e.action, target, e.client_address ?? '-', e.request_id, outcome]
    .filter(Boolean)
    .join('  ');
}

/**
 * `sluice audit`: the recent entries of a running gateway's audit log (oldest first, one a line,
 * or the API's JSON with --json), filtered like GET /admin/audit, with the master key or an admin
 * key in SLUICE_MASTER_KEY.
 */
export async function runAudit(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const { values } = parseFlags('audit', args, {
    url: { type: 'string' },
    json: { type: 'boolean', default: false },
    limit: { type: 'string', default: '20' },
    actor: { type: 'string' },
    action: { type: 'string' },
    'target-type': { type: 'string' },
    'target-id': { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
  });
  if (values.help) return console.log(usage.audit);
  const params = new URLSearchParams({ limit: String(integerFlag('audit', 'limit', values.limit, 1, 1000)) });
  for (const [flag, param] of Object.entries(FILTERS)) {
    const value = values[flag as keyof typeof FILTERS];
    if (value) params.set(param, value);
  }
  const page = await call<{ data: AuditEntryJson[] }>(connect(values.url, env), 'GET', `/admin/audit?${params}`);
  if (values.json) return printJson(page.data);
  for (const e of page.data.toReversed()) console.log(line(e));
}
