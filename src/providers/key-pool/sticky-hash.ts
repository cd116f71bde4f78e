/**
 * Highest random weight (rendezvous hashing): each (affinity, item) pair hashes to a score scaled
 * by the item's weight, and the highest wins. Every instance picks the same item without sharing
 * state, an item leaving moves only the affinities it had, and an item of twice the weight wins
 * twice as many. Route targets (routing/order.ts) and a provider's keys (choose-key.ts) stick by it.
 */
export function rendezvous<T>(
  items: readonly T[],
  affinity: string,
  idOf: (item: T) => string,
  weightOf: (item: T) => number,
): T {
  let best = items[0];
  let bestScore = -Infinity;
  for (const item of items) {
    // -w / ln(u) is the weighted form, u uniform in (0, 1).
    const u = (fnv1a(`${affinity}\u0000${idOf(item)}`) + 0.5) / 2 ** 32;
    const score = -weightOf(item) / Math.log(u);
    if (score > bestScore) {
      bestScore = score;
      best = item;
    }
  }
  return best;
}

/**
 * FNV-1a, 32 bits, with murmur3's finalizer: stable across processes, which is all stickiness
 * needs. The finalizer spreads the last characters over every bit: without it, items whose ids
 * differ only at their end (`key-1`, `key-2`) kept nearly the same order for every affinity.
 */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}
