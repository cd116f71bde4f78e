import type { Registry } from 'prom-client';

type Labels = Record<string, string>;

/**
 * Counters and histograms whose label sets are resolved once into a series object that a request
 * updates with a plain addition, registered in a prom-client Registry, which still formats,
 * serves and (across workers) aggregates them from `get()`. Why not prom-client's own: every
 * `inc`/`observe` on one of its children hashes and validates the label set again (hashObject,
 * validateLabel), and sluice makes ~10 of them per request; in `npm run bench`'s gateway profile
 * a request's metrics cost ~22 µs that way (the calls alone, hot in a loop: ~4 µs).
 */
abstract class SeriesMetric<S extends { labels: Labels }> {
  abstract readonly type: 'counter' | 'histogram';
  readonly aggregator = 'sum' as const;
  readonly name: string;
  readonly help: string;
  private readonly labelNames: readonly string[];
  private readonly series = new Map<string, S>();

  constructor(name: string, help: string, labelNames: readonly string[], registry: Registry) {
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
    registry.registerMetric(this as never);
  }

  /** The series of `labels` (every label name, in any order), made at its first use. */
  of(labels: Labels): S {
    let key = '';
    for (const name of this.labelNames) key += `${labels[name]}\u0000`;
    let series = this.series.get(key);
    if (series === undefined) {
      const own: Labels = {};
      for (const name of this.labelNames) own[name] = labels[name];
      series = this.create(own);
      this.series.set(key, series);
    }
    return series;
  }

  protected abstract create(labels: Labels): S;
  protected abstract values(series: S): { labels: Labels; value: number; metricName?: string }[];

  /** prom-client's metric interface: what the registry formats and aggregates. */
  get() {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: [...this.series.values()].flatMap((s) => this.values(s)),
    };
  }

  reset(): void {
    this.series.clear();
  }
}

export class CounterSeries {
  readonly labels: Labels;
  value = 0;
  constructor(labels: Labels) {
    this.labels = labels;
  }
  inc(by = 1): void {
    this.value += by;
  }
}

export class SeriesCounter extends SeriesMetric<CounterSeries> {
  readonly type = 'counter';
  protected create(labels: Labels): CounterSeries {
    return new CounterSeries(labels);
  }
  protected values(s: CounterSeries) {
    return [{ labels: s.labels, value: s.value }];
  }
}

export class HistogramSeries {
  readonly labels: Labels;
  private readonly bounds: readonly number[];
  /** Per bucket (not cumulative), the one past the last bound included. */
  readonly counts: number[];
  sum = 0;
  count = 0;
  constructor(labels: Labels, bounds: readonly number[]) {
    this.labels = labels;
    this.bounds = bounds;
    this.counts = Array.from({ length: bounds.length + 1 }, () => 0);
  }
  observe(value: number): void {
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]) i++;
    this.counts[i]++;
    this.sum += value;
    this.count++;
  }
}

export class SeriesHistogram extends SeriesMetric<HistogramSeries> {
  readonly type = 'histogram';
  private readonly bounds: readonly number[];
  constructor(name: string, help: string, labelNames: readonly string[], bounds: readonly number[], registry: Registry) {
    super(name, help, labelNames, registry);
    this.bounds = bounds;
  }
  protected create(labels: Labels): HistogramSeries {
    return new HistogramSeries(labels, this.bounds);
  }
  /** Prometheus' shape: cumulative `_bucket`s with `le`, then `_sum` and `_count`. */
  protected values(s: HistogramSeries) {
    let cumulative = 0;
    const out: { labels: Labels; value: number; metricName?: string }[] = [];
    for (let i = 0; i <= this.bounds.length; i++) {
      cumulative += s.counts[i];
      const le = i < this.bounds.length ? String(this.bounds[i]) : '+Inf';
      out.push({ labels: { ...s.labels, le }, value: cumulative, metricName: `${this.name}_bucket` });
    }
    out.push({ labels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
    out.push({ labels: s.labels, value: s.count, metricName: `${this.name}_count` });
    return out;
  }
}
