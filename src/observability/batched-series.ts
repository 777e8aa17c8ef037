/**
 * Series written on every request (cache hits, request counts and durations). Counters are kept
 * in plain numbers and handed to prom-client's public `inc(labels, n)` when a metric is read:
 * prom-client hashes and validates the label set on every inc, even through a child from
 * `.labels()`. Reads never lag: each batched metric's `collect()` (run by prom-client before
 * every `get()`, so before every scrape) folds what is pending first. Histograms are kept here
 * whole (BatchedHistogram), since prom-client has no public way to add many observations at once.
 */
import type { Counter, LabelValues } from 'prom-client';

/** One label set of a counter, counted locally. */
export class CounterSeries {
  private pending = 0;

  constructor(
    private readonly counter: Counter<string>,
    private readonly labels: LabelValues<string>,
  ) {}

  inc(): void {
    this.pending++;
  }

  /** Hands the pending count to prom-client. */
  flush(): void {
    if (this.pending === 0) return;
    this.counter.inc(this.labels, this.pending);
    this.pending = 0;
  }
}

/** One sample of a histogram, in the shape prom-client's own `get()` gives (and AggregatorRegistry takes). */
export interface HistogramSample {
  readonly labels: Record<string, string | number>;
  readonly value: number;
  readonly metricName: string;
}

/** A histogram's name, help, labels and samples, as prom-client's `get()` gives them. */
export interface HistogramSnapshot {
  readonly name: string;
  readonly help: string;
  readonly type: 'histogram';
  readonly aggregator: 'sum';
  readonly values: HistogramSample[];
}

/** One label set of a {@link BatchedHistogram}, bucketed in plain numbers. */
export class HistogramSeries {
  /** Non-cumulative counts per bound; above the last bound only `count` holds a value, as in prom-client. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    private readonly bounds: readonly number[],
    readonly labels: Readonly<Record<string, string>>,
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    // prom-client refuses these too; a NaN would poison the sum.
    if (!Number.isFinite(value)) return;
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    if (i < bounds.length) this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

/** Settings of a {@link BatchedHistogram}, as for prom-client's Histogram. */
export interface BatchedHistogramOptions<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames?: readonly L[];
  readonly buckets: readonly number[];
}

/**
 * A histogram kept in plain numbers, outside prom-client: prom-client hashes and validates the
 * label set on every observe (many times what this costs, on every hit) and has no public way to add
 * many observations at once. Its samples, in prom-client's own shape, are exposed through
 * prom-client's public AggregatorRegistry.aggregate and Registry.merge (GatewayMetrics.scrape).
 */
export class BatchedHistogram<L extends string = string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  readonly bounds: readonly number[];
  readonly #series = new Map<string, HistogramSeries>();

  constructor(options: BatchedHistogramOptions<L>) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames ?? [];
    this.bounds = [...options.buckets].sort((a, b) => a - b);
  }

  /** The series of one label set (every label named, no other), created on first use. */
  series(labels: Partial<Record<L, string>>): HistogramSeries {
    const values = this.labelNames.map((name) => labels[name]);
    if (
      values.some((value) => value === undefined) ||
      Object.keys(labels).length !== this.labelNames.length
    ) {
      throw new TypeError(
        `${this.name}: labels ${JSON.stringify(labels)} do not match ${this.labelNames.join(', ')}`,
      );
    }
    const key = values.join('\n');
    let series = this.#series.get(key);
    if (series === undefined) {
      series = new HistogramSeries(
        this.bounds,
        Object.fromEntries(this.labelNames.map((name, i) => [name, values[i]!])),
      );
      this.#series.set(key, series);
    }
    return series;
  }

  /** One observation (off the hot path: tests, rare callers); `labels` may be left out without label names. */
  observe(labels: Partial<Record<L, string>> | number, value?: number): void {
    if (typeof labels === 'number') this.series({}).observe(labels);
    else this.series(labels).observe(value ?? Number.NaN);
  }

  /** The samples as prom-client's Histogram.get() gives them: cumulative buckets, +Inf, sum, count. */
  get(): Promise<HistogramSnapshot> {
    const values: HistogramSample[] = [];
    for (const series of this.#series.values()) {
      let cumulative = 0;
      for (const [i, bound] of this.bounds.entries()) {
        cumulative += series.counts[i]!;
        values.push({
          labels: { le: bound, ...series.labels },
          value: cumulative,
          metricName: `${this.name}_bucket`,
        });
      }
      values.push({
        labels: { le: '+Inf', ...series.labels },
        value: series.count,
        metricName: `${this.name}_bucket`,
      });
      values.push({
        labels: { ...series.labels },
        value: series.sum,
        metricName: `${this.name}_sum`,
      });
      values.push({
        labels: { ...series.labels },
        value: series.count,
        metricName: `${this.name}_count`,
      });
    }
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: 'histogram',
      aggregator: 'sum',
      values,
    });
  }
}

/** Every batched series of one registry, flushed together. */
export class SeriesBatch {
  private readonly series: CounterSeries[] = [];

  /** Pass as a metric's `collect` option: prom-client calls it before every read. */
  readonly flush = (): void => {
    for (const one of this.series) one.flush();
  };

  counter(counter: Counter<string>, labels: LabelValues<string>): CounterSeries {
    const series = new CounterSeries(counter, labels);
    this.series.push(series);
    return series;
  }
}
