import { call, connect, printJson, printTable } from './admin-call.ts';
import { OperatorError, UsageError } from './operator-error.ts';
import { parseFlags } from './parse-flags.ts';
import { usage } from './usage.ts';

interface Amounts {
  input: number;
  cached: number;
  output: number;
  cost: number;
}

/** A run as POST /admin/reconciliations answers it (server/routes/reconciliations.ts), as far as the command reads it. */
interface ReconciliationJson {
  id: string;
  provider: string;
  from: string;
  to: string;
  status: 'ok' | 'over' | 'failed';
  threshold: { relative: number; absolute_usd: number } | null;
  totals: { ledger: Amounts; report: Amounts; drift: Amounts; relative: Amounts } | null;
  lines: {
    day: string;
    model: string;
    ledger: Amounts & { requests: number };
    report: Amounts;
    keys: string[];
    drift: Amounts;
    relative: Amounts;
    status: string;
  }[];
  zero_priced: { day: string; model: string; report: Amounts }[];
  missing_days: { day: string; missing_in: string }[];
  reasons: string[];
  notes: string[];
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const pct = (r: number) => `${(r * 100).toFixed(2)}%`;
const usd = (n: number) => `$${n.toFixed(6)}`;
const both = (l: number, r: number) => `${l}/${r}`;

/**
 * `sluice reconcile --provider NAME [--from DAY] [--to DAY] [--json]`: asks a running gateway to
 * reconcile the ledger against the provider's report (POST /admin/reconciliations), prints both
 * sides per day and model with the drift, and exits 1 past the configured threshold (for cron).
 * Exit 2: nothing was reconciled (a bad command line, no gateway, a report that could not be read).
 */
export async function runReconcile(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const { values } = parseFlags('reconcile', args, {
    url: { type: 'string' },
    json: { type: 'boolean', default: false },
    provider: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
  });
  if (values.help) return console.log(usage.reconcile);
  if (!values.provider) throw new UsageError('sluice reconcile: name the provider with --provider, e.g. --provider openai.');
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  const to = values.to ?? yesterday;
  const from = values.from ?? to;
  for (const [flag, value] of [
    ['from', from],
    ['to', to],
  ] as const) {
    if (!DAY.test(value)) throw new UsageError(`sluice reconcile: --${flag} must be a UTC day, YYYY-MM-DD, not "${value}".`);
  }
  let run: ReconciliationJson;
  try {
    run = await call<ReconciliationJson>(connect(values.url, env), 'POST', '/admin/reconciliations', {
      provider: values.provider,
      from,
      to,
    });
  } catch (err) {
    if (err instanceof OperatorError) throw new OperatorError(err.message, 2);
    throw err;
  }
  if (values.json) printJson(run);
  else print(run);
  process.exitCode = run.status === 'over' ? 1 : 0;
}

function print(run: ReconciliationJson): void {
  const t = run.threshold;
  const limit = t ? ` (threshold ${pct(t.relative)}, $${t.absolute_usd})` : '';
  console.log(`reconcile ${run.provider} ${run.from}..${run.to}: ${run.status}${limit}  ${run.id}`);
  printTable(
    ['day', 'model', 'req', 'input l/r', 'cached l/r', 'output l/r', 'cost ledger', 'cost report', 'drift', 'drift %', 'status'],
    run.lines.map((l) => [
      l.day,
      l.keys.length > 0 ? `${l.model} [${l.keys.join(',')}]` : l.model,
      l.ledger.requests,
      both(l.ledger.input, l.report.input),
      both(l.ledger.cached, l.report.cached),
      both(l.ledger.output, l.report.output),
      usd(l.ledger.cost),
      usd(l.report.cost),
      usd(l.drift.cost),
      pct(l.relative.cost),
      l.status,
    ]),
  );
  if (run.totals) {
    const { ledger, report, drift, relative } = run.totals;
    console.log(
      `total: cost ${usd(ledger.cost)} ledger, ${usd(report.cost)} report, drift ${usd(drift.cost)} (${pct(relative.cost)}); ` +
        `tokens drift input ${drift.input}, cached ${drift.cached}, output ${drift.output}`,
    );
  }
  for (const z of run.zero_priced) console.log(`priced at 0 in the ledger, billed: ${z.day} ${z.model} ${usd(z.report.cost)}`);
  for (const m of run.missing_days) console.log(`no rows in the ${m.missing_in}: ${m.day}`);
  for (const reason of run.reasons) console.log(`over: ${reason}`);
  for (const note of run.notes) console.log(`note: ${note}`);
}
