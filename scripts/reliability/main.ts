import { spawnSync, execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { readResults, renderReliability } from './render.ts';
import { runFaults } from './run-faults.ts';

/**
 * `npm run reliability [-- --fuzz-runs N] [--soak-minutes M] [--render-only]`: the fault matrix
 * (with the ledger and bad-input tests), a short fuzz and a short soak, each writing its JSON to
 * .reliability/, then docs/reliability/report.md rendered from them. Exits 1 when any part did not hold (the
 * file is still written, saying what failed).
 */
const { values } = parseArgs({
  options: {
    'fuzz-runs': { type: 'string', default: '2000' },
    'soak-minutes': { type: 'string', default: '1' },
    'render-only': { type: 'boolean', default: false },
  },
});
const dir = '.reliability';
let failed = false;

if (!values['render-only']) {
  console.log('reliability: fault matrix, ledger and bad-input tests');
  const faults = await runFaults(`${dir}/faults.json`, `${dir}/observations.jsonl`);
  console.log(`  ${faults.passed} passed, ${faults.failed} failed`);
  failed ||= faults.failed > 0;

  const node = (args: string[]) => spawnSync(process.execPath, args, { stdio: 'inherit' }).status === 0;
  console.log('reliability: fuzz');
  failed = !node(['fuzz/main.ts', '--runs', values['fuzz-runs'], '--out', `${dir}/fuzz.json`]) || failed;
  console.log('reliability: soak');
  failed =
    !node(['--expose-gc', 'test/soak/main.ts', '--minutes', values['soak-minutes'], '--out', `${dir}/soak.json`]) || failed;
}

const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'cpu'}`;
// In docs/ so the docs site publishes it beside the page that explains it (docs/reliability/index.md).
const report = 'docs/reliability/report.md';
mkdirSync('docs/reliability', { recursive: true });
writeFileSync(report, renderReliability({ ...readResults(dir), commit, node: process.version, machine }));
console.log(`${report} written${failed ? ': some parts did not hold' : ''}`);
process.exitCode = failed ? 1 : 0;
