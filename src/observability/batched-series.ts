/**
 * Counters written on every request (cache hits, request counts), kept in plain numbers and
 * handed to prom-client's public `inc(labels, n)` when a metric is read: prom-client hashes and
 * validates the label set on every inc, even through a child from `.labels()`. Reads never lag:
 * each batched metric's `collect()` (run by prom-client before every `get()`, so before every
 * scrape) folds what is pending first.
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
