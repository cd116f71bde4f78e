/**
 * The request log's paging on a large ledger: `node bench/ledger-page.ts [--rows N] [--runs N]`
 * (default 1,000,000 rows, 7 runs a page). Seeds an embedded SQLite store in a temp folder, times
 * one page of each kind against the 50 ms target and checks every page's rows (ledger-paging.ts).
 * `npm run bench` runs the same after its load phases. Exits 1 when a page misses the target.
 */
import { parseArgs } from 'node:util';
import { formatLedgerPage, ledgerPageBench } from './ledger-paging.ts';

const { values } = parseArgs({
  options: { rows: { type: 'string', default: '1000000' }, runs: { type: 'string', default: '7' } },
});
const rows = Number(values.rows);
const runs = Number(values.runs);
if (!Number.isInteger(rows) || rows < 1000) throw new Error('--rows must be an integer of at least 1000');
if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs must be a positive integer');

const result = await ledgerPageBench({ rows, runs, log: (line) => process.stderr.write(`${line}\n`) });
console.log(formatLedgerPage(result));
process.exitCode = result.pages.every((p) => p.pass) ? 0 : 1;
