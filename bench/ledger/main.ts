/**
 * The ledger at a year's scale on PostgreSQL: `npm run bench:ledger -- [--rows 10000000] [--runs 50]
 * [--out file.md] [--keep]` with DATABASE_URL set (docs/benchmarks/ledger.md). Works in a schema of its own,
 * dropped at the end. Exits 1 when a query's p95 or a row's size misses its target.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { formatLedgerBench, ledgerBench, TARGETS } from './ledger-bench.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000000' },
    runs: { type: 'string', default: '50' },
    'insert-batches': { type: 'string', default: '40' },
    out: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const rows = Number(values.rows);
const runs = Number(values.runs);
const insertBatches = Number(values['insert-batches']);
if (!Number.isInteger(rows) || rows < 1000) throw new Error('--rows must be an integer of at least 1000');
if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs must be a positive integer');
if (!Number.isInteger(insertBatches) || insertBatches < 1) throw new Error('--insert-batches must be a positive integer');
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error('DATABASE_URL must name a PostgreSQL database (the bench works in a schema of its own)');

const result = await ledgerBench({
  databaseUrl,
  rows,
  runs,
  insertBatches,
  keep: values.keep,
  log: (line) => process.stderr.write(`${line}\n`),
});
const report = formatLedgerBench(result, `npm run bench:ledger -- ${process.argv.slice(2).join(' ')}`.trim());
console.log(report);
if (values.out)
  writeFileSync(values.out, `# Ledger bench, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC\n\n${report}\n`);
const pass = result.queries.every((q) => q.p95Ms < TARGETS.queryP95Ms) && result.rowBytes <= TARGETS.rowBytes;
process.exitCode = pass ? 0 : 1;
