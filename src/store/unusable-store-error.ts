/**
 * A store sluice will not open on its own: retrying cannot fix it, its operator must, and the
 * message says how. Start-up ends with it rather than serving on a store it cannot use. In a
 * file of its own: `sluice serve` explains it without loading the store's code.
 */
export class UnusableStoreError extends Error {
  override readonly name = 'UnusableStoreError';
}
