import { setFlagsFromString } from 'node:v8';
import { operatorSet } from './node-flags.ts';

const FLAG = '--semi-space-growth-factor';
/** V8's default growth factor, restored once the gateway listens. */
const V8_DEFAULT = 2;

/**
 * Keeps V8's young generation at its initial size while the gateway loads, and returns what lets
 * it grow again. Loading the modules and opening the store allocate in bursts whose objects nearly
 * all survive (code, schemas, the pricing data); on that survival rate V8 doubles the young
 * generation up to its 32 MiB maximum, and an idle process never gives it back: V8's memory reducer
 * still sees start-up's allocation rate and keeps waiting ("high alloc" in
 * `--trace-memory-reducer`, checked for 45 s). Measured with bench/idle-rss.ts (`serve --workers 1`,
 * compiled, RSS 3 s after listening, 5 starts): 139-143 -> 118-122 MiB, the new space 32 -> 2 MiB
 * (the old space takes ~7 MiB more: start-up's short-lived objects get promoted), for ~40 ms more
 * to start (500 -> 540 ms). Under load the young generation grows again as usual, which the CPU
 * figures need (a capped one costs 10-15%, docs/benchmarks/memory.md). Left alone when the operator sized the
 * young generation (a semi-space flag on node's command line or in NODE_OPTIONS).
 */
export function holdYoungGeneration(): () => void {
  if (operatorSet('semi-space')) return () => {};
  setFlagsFromString(`${FLAG}=1`);
  return () => setFlagsFromString(`${FLAG}=${V8_DEFAULT}`);
}
