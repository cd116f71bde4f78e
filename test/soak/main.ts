import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { mib, runSoak } from './run-soak.ts';

/**
 * `npm run soak [-- --minutes N] [--seed S] [--concurrency C] [--out FILE]`: 5 minutes of mixed
 * streaming traffic with faults (SOAK_MINUTES, SOAK_SEED override the defaults), then the checks of
 * run-soak.ts. Writes the result as JSON (for docs/reliability/report.md); exits 1 if anything did not hold.
 */
const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: process.env.SOAK_MINUTES ?? '5' },
    seed: { type: 'string', default: process.env.SOAK_SEED ?? '1' },
    concurrency: { type: 'string', default: '16' },
    out: { type: 'string', default: '.reliability/soak.json' },
  },
});
const minutes = Number(values.minutes);
if (!(minutes > 0)) throw new Error(`--minutes must be a positive number, not ${values.minutes}`);

const result = await runSoak({
  seconds: Math.round(minutes * 60),
  seed: Number(values.seed),
  concurrency: Number(values.concurrency),
  log: (line) => console.log(line),
});
console.log(
  `${result.requests} requests (${Object.entries(result.byKind)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ')}), ${result.requestsPerSecond}/s; ` +
    `${result.ledgerRows} ledger rows; RSS ${mib(result.warm.rssBytes)} -> ${mib(result.after.rssBytes)}, heap ${mib(result.warm.heapUsedBytes)} -> ${mib(result.after.heapUsedBytes)}`,
);
mkdirSync(dirname(values.out), { recursive: true });
writeFileSync(values.out, `${JSON.stringify({ kind: 'soak', finishedAt: new Date().toISOString(), ...result }, null, 2)}\n`);
for (const failure of result.failures) console.log(`FAIL ${failure}`);
console.log(result.failures.length === 0 ? 'soak held' : `soak failed: ${result.failures.length} checks`);
process.exitCode = result.failures.length === 0 ? 0 : 1;
