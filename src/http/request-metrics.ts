/**
 * Per-request metric series, memoised by label values and counted locally (batched-series.ts):
 * prom-client would hash the label set on every call, even through a child.
 */
import type { CounterSeries, HistogramSeries } from '../observability/batched-series.js';
import type { GatewayMetrics } from '../observability/metrics.js';

/**
 * Records one request's counter and duration. Label sets are few and bounded: routes × methods ×
 * statuses, times (only with metrics.workspaceLabel) the listed workspaces plus `other`.
 */
export class RequestMetrics {
  private readonly counters = new Map<string, CounterSeries>();
  private readonly durations = new Map<string, HistogramSeries>();

  constructor(private readonly metrics: GatewayMetrics) {}

  /** Counts a request and observes its duration in seconds; `workspace` is the request's, if it had one. */
  record(route: string, method: string, status: number, cache: string, seconds: number, workspace?: string): void {
    // Methods outside the API collapse into one label value so a client cannot mint new series.
    const methodLabel = method === 'GET' || method === 'HEAD' ? method : 'other';
    // Undefined unless an allow-list is configured; then a listed workspace or `other`.
    const ws = this.metrics.workspaceLabelOf(workspace);
    const counterKey = `${route}\n${methodLabel}\n${status}\n${ws ?? ''}`;
    let counter = this.counters.get(counterKey);
    if (counter === undefined) {
      const labels = { route, method: methodLabel, status: String(status) };
      counter = this.metrics.batch.counter(this.metrics.httpRequests, ws === undefined ? labels : { ...labels, workspace: ws });
      this.counters.set(counterKey, counter);
    }
    counter.inc();
    const durationKey = `${route}\n${cache}\n${ws ?? ''}`;
    let duration = this.durations.get(durationKey);
    if (duration === undefined) {
      duration = this.metrics.batch.histogram(this.metrics.httpDuration, ws === undefined ? { route, cache } : { route, cache, workspace: ws });
      this.durations.set(durationKey, duration);
    }
    duration.observe(seconds);
  }
}
