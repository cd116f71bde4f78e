/**
 * Levenshtein distance with adjacent transpositions counted as one edit (`prot` -> `port`), the
 * commonest typo. Hand-written: none of sluice's dependencies exports one (zod, yaml and the rest
 * only match exactly), and fifteen lines are cheaper than a package for a few short key names.
 */
export function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) current[j] = Math.min(current[j], before[j - 2] + 1);
    }
    before = previous;
    previous = current;
  }
  return previous[b.length];
}

/**
 * The candidate closest to `word`, if it is close enough to be a typo of it (about a third of its
 * letters), else one that `word` begins (`cache_read` for `cache_read_mtok`).
 */
export function closestMatch(word: string, candidates: readonly string[]): string | undefined {
  const bound = Math.max(1, Math.floor(word.length / 3));
  let best: string | undefined;
  let bestDistance = bound + 1;
  for (const candidate of candidates) {
    const d = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  if (best === undefined && word.length >= 4) best = candidates.find((c) => c.toLowerCase().startsWith(word.toLowerCase()));
  return best;
}
