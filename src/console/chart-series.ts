/** The series a chart's legend lists at most: the largest by volume, the rest summed as one. */
export const MAX_SERIES = 8;

/** The series of the rest, past the largest. */
export const OTHER = 'other';

/**
 * What the rollups hold for a request refused before routing (no provider, no model): the
 * charts name it rather than showing an empty name ("/", or uPlot's "Value").
 */
export const REFUSED = 'refused (no upstream)';

/** A chart's name for a provider/model pair of the rollups. */
export function modelSeriesName(provider: string, model: string): string {
  return provider === '' && model === '' ? REFUSED : `${provider}/${model}`;
}

export function providerSeriesName(provider: string): string {
  return provider === '' ? REFUSED : provider;
}

/**
 * The `max - 1` largest series by `volume` and, when there are more, one `other` holding the sum
 * of the rest (so the legend has at most `max` entries and the totals stay whole). Order: largest
 * first, `other` last; ties by name, so that a refresh does not reorder the legend.
 */
export function boundSeries<T>(
  series: ReadonlyMap<string, T>,
  volume: (s: T) => number,
  add: (into: T, from: T) => void,
  empty: () => T,
  max = MAX_SERIES,
): Map<string, T> {
  const ranked = [...series].sort(([a, x], [b, y]) => volume(y) - volume(x) || (a < b ? -1 : a > b ? 1 : 0));
  if (ranked.length <= max) return new Map(ranked);
  const kept = new Map(ranked.slice(0, max - 1));
  const other = kept.get(OTHER) ?? empty();
  for (const [, s] of ranked.slice(max - 1)) add(other, s);
  kept.delete(OTHER);
  kept.set(OTHER, other);
  return kept;
}

/** Adds one array of numbers into another, period by period. */
export function addInto(into: number[], from: readonly number[]): void {
  from.forEach((n, i) => (into[i] += n));
}
