/**
 * Per-request metric children, memoised by label values: prom-client hashes a labels object
 * on every call, while a child is resolved once and then incremented directly.
 */
import type { Counter, Histogram } from 'prom-client';
import type { GatewayMetrics } from '../observability/metrics.js';

type CounterChild = ReturnType<Counter<'route' | 'method' | 'status' | 'workspace'>['labels']>;
type HistogramChild = ReturnType<Histogram<'route' | 'cache' | 'workspace'>['labels']>;

/**
 * Records one request's counter and duration. Label sets are few and bounded: routes × methods ×
 * statuses, times (only with metrics.workspaceLabel) the listed workspaces plus `other`.
 */
export class RequestMetrics {
  private readonly counters = new Map<string, CounterChild>();
  private readonly durations = new Map<string, HistogramChild>();

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
      counter = this.metrics.httpRequests.labels(ws === undefined ? labels : { ...labels, workspace: ws });
      this.counters.set(counterKey, counter);
    }
    counter.inc();
    const durationKey = `${route}\n${cache}\n${ws ?? ''}`;
    let duration = this.durations.get(durationKey);
    if (duration === undefined) {
      duration = this.metrics.httpDuration.labels(ws === undefined ? { route, cache } : { route, cache, workspace: ws });
      this.durations.set(durationKey, duration);
    }
    duration.observe(seconds);
  }
}
