/**
 * Per-request metric children, memoised by label values: prom-client hashes a labels object
 * on every call, while a child is resolved once and then incremented directly.
 */
import type { Counter, Histogram } from 'prom-client';
import type { GatewayMetrics } from '../observability/metrics.js';

type CounterChild = ReturnType<Counter<'route' | 'method' | 'status'>['labels']>;
type HistogramChild = ReturnType<Histogram<'route' | 'cache'>['labels']>;

/** Records one request's counter and duration. Label sets are few and bounded (routes × methods × statuses). */
export class RequestMetrics {
  private readonly counters = new Map<string, CounterChild>();
  private readonly durations = new Map<string, HistogramChild>();

  constructor(private readonly metrics: GatewayMetrics) {}

  /** Counts a request and observes its duration in seconds. */
  record(route: string, method: string, status: number, cache: string, seconds: number): void {
    // Methods outside the API collapse into one label value so a client cannot mint new series.
    const methodLabel = method === 'GET' || method === 'HEAD' ? method : 'other';
    const counterKey = `${route}\n${methodLabel}\n${status}`;
    let counter = this.counters.get(counterKey);
    if (counter === undefined) {
      counter = this.metrics.httpRequests.labels({ route, method: methodLabel, status: String(status) });
      this.counters.set(counterKey, counter);
    }
    counter.inc();
    const durationKey = `${route}\n${cache}`;
    let duration = this.durations.get(durationKey);
    if (duration === undefined) {
      duration = this.metrics.httpDuration.labels({ route, cache });
      this.durations.set(durationKey, duration);
    }
    duration.observe(seconds);
  }
}
