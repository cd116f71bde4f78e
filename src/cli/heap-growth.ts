import { setFlagsFromString } from 'node:v8';
import { operatorSet } from './node-flags.ts';

export interface HeapGrowthOptions {
  /** Requests in flight above which the heap grows in small steps. */
  tightAbove: number;
  /** Requests in flight below which V8 chooses again (a gap, so the switch does not flap). */
  looseBelow: number;
  /** How often the count is read. */
  everyMs: number;
  /** Sets V8 flags (v8.setFlagsFromString; a test's stand-in). */
  setFlags: (flags: string) => void;
}

const FLAG = '--heap-growing-percent';
/** The old generation's next limit: 25% over what a full GC left, rather than V8's own factor. */
const TIGHT = 25;

/**
 * With thousands of requests in flight the live heap is hundreds of MiB (a slow stream holds
 * ~30 KiB of it), and V8 lets the old generation grow well past it before the next full GC: the
 * soak (`npm run bench -- --soak`: 10,000 slow streams, one process) peaked at 1,153 MiB RSS, over
 * its 1 GiB bound. Growing by 25% steps once 2,000 are in flight: peak 840 MiB, no error, for
 * more of the gateway's CPU over the whole soak (81.5 s -> 101.8 s; 94.6 s with the flag set from
 * the start, a run of its own). V8's memory saver mode held 577 MiB but cost 2.4x the CPU and could
 * not keep 10,000 open.
 * Below the threshold V8 chooses as usual: no CPU figure of `npm run bench` (256 streams at most)
 * is touched. V8 reads the flag at each full GC, so setting it at run time takes effect at the
 * next one. Process-wide, hence here and not in createGateway (tests and the bench run several
 * gateways in one process). Left alone when the operator set it. Returns the stop.
 */
export function watchHeapGrowth(
  inFlight: () => number,
  options: HeapGrowthOptions = { tightAbove: 2_000, looseBelow: 1_000, everyMs: 1_000, setFlags: setFlagsFromString },
): () => void {
  if (operatorSet('heap-growing')) return () => {};
  let tight = false;
  const timer = setInterval(() => {
    const n = inFlight();
    if (!tight && n > options.tightAbove) {
      options.setFlags(`${FLAG}=${TIGHT}`);
      tight = true;
    } else if (tight && n < options.looseBelow) {
      // 0 is V8's "choose the factor yourself".
      options.setFlags(`${FLAG}=0`);
      tight = false;
    }
  }, options.everyMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    if (tight) options.setFlags(`${FLAG}=0`);
  };
}
