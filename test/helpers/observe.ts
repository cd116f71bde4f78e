import { appendFileSync } from 'node:fs';

/**
 * A figure a fault test measured, for the reliability report (scripts/reliability/): what a
 * budget spent against its limit under a fault, how many ledger rows a crash lost. The test
 * asserts its bound itself; this keeps the number it saw, so the report states the worst one
 * observed rather than only "held". Written only when `npm run reliability` asks for it (the
 * SLUICE_OBSERVATIONS file); a plain `npm test` writes nothing.
 */
export type Observation =
  | { kind: 'spend'; case: string; spentUsd: number; limitUsd: number; allowedUsd: number }
  | { kind: 'rows'; case: string; requests: number; rows: number };

export function observe(observation: Observation): void {
  const file = process.env.SLUICE_OBSERVATIONS;
  if (file) appendFileSync(file, `${JSON.stringify(observation)}\n`);
}
