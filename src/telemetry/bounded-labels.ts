/**
 * A label whose values come from clients (a model name anyone can type) must not grow the
 * metrics without bound: the first `limit` distinct values keep their own label, later ones are
 * counted under `other`. Values the gateway vouches for (a priced model) always keep theirs.
 */
export class BoundedLabels {
  private readonly seen = new Set<string>();
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  label(value: string, vouched = false): string {
    if (vouched || this.seen.has(value)) return value;
    if (this.seen.size >= this.limit) return 'other';
    this.seen.add(value);
    return value;
  }
}
