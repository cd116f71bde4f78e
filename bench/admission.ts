/**
 * What the admit step of a governed request costs: `npx node bench/admission.ts [--requests N]`.
 * Runs admit + settle alone (admission-cost.ts) in memory and, with REDIS_URL, in Redis, and
 * prints the CPU per request of this process (Redis's own CPU is not counted). `npm run bench`
 * runs the same in memory for its governed target, beside the governed row end to end.
 */
import { parseArgs } from 'node:util';
import { admissionCost } from './admission-cost.ts';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '20000' } } });
const REQUESTS = Number(values.requests);

const fmt = (n: number) => n.toFixed(1).padStart(7);
let problems = 0;

async function report(name: string, redisUrl: string | undefined): Promise<void> {
  const result = await admissionCost(redisUrl, REQUESTS);
  for (const line of result.problems) console.error(line);
  problems += result.problems.length;
  for (const run of result.runs) {
    console.log(
      `${name.padEnd(7)} ${String(run.inFlight).padStart(3)} in flight: admit+settle ${fmt(run.governedCpuUs)} µs CPU ` +
        `(${fmt(run.governedCpuUs - run.plainCpuUs)} µs more than no tier), ${fmt(run.wallUs)} µs wall per request`,
    );
  }
}

console.log(`admission cost, ${REQUESTS} requests per run, 100 keys, the governed tier of npm run bench (governed-tier.ts)`);
await report('memory', undefined);
if (process.env.REDIS_URL) await report('redis', process.env.REDIS_URL);
else console.log('redis   skipped: REDIS_URL not set');
if (problems > 0) console.log(`${problems} problem(s) logged above: the figures are not a clean measurement`);
process.exit(problems > 0 ? 1 : 0);
