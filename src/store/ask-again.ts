/**
 * Asking the store again for a row another process may still be writing (a stored response, a
 * relayed id): the waits between asks, and the loop that takes them.
 *
 * The waits double from 10 ms to at most 100 ms, the last one cut to end at the deadline, and a
 * last ask is made there: 8 asks in 500 ms where a fixed 10 ms wait made 50. Every miss (an
 * unknown id, or another project's, which must take as long) cost those 50 queries, on PostgreSQL
 * 3 of the relayed-ids contract suite's 8 s; a row that lands meanwhile is still found within
 * 100 ms of its write (the 49 of 300 immediate continuations measured on the other of two
 * workers found theirs in the first few tens of ms).
 */
const FIRST_WAIT_MS = 10;
const LONGEST_WAIT_MS = 100;

/** The waits between asks over `totalMs`, in order; they sum to `totalMs` (none when it is 0). */
export function askAgainWaits(totalMs: number): number[] {
  const waits: number[] = [];
  let left = Math.max(0, totalMs);
  for (let wait = FIRST_WAIT_MS; left > 0; wait = Math.min(wait * 2, LONGEST_WAIT_MS)) {
    waits.push(Math.min(wait, left));
    left -= waits.at(-1)!;
  }
  return waits;
}

/**
 * Runs `ask` again after each wait of askAgainWaits(`totalMs`) until it says it is done (it was
 * asked once already by the caller, who knows what a miss is).
 */
export async function askAgain(totalMs: number, ask: () => Promise<boolean>): Promise<void> {
  for (const wait of askAgainWaits(totalMs)) {
    await new Promise((resolve) => setTimeout(resolve, wait));
    if (await ask()) return;
  }
}
