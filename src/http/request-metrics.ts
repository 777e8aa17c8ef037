/**
 * Per-request metric series, memoised by label values and counted locally (batched-series.ts):
 * prom-client would hash the label set on every call, even through a child.
 */
import type { CounterSeries, HistogramSeries } from '../observability/batched-series.js';
import type { GatewayMetrics } from '../observability/metrics.js';

/** The series of one combination of label values. */
interface LastSeries {
  readonly method: string;
  readonly status: number;
  readonly cache: string;
  readonly ws: string | undefined;
  readonly counter: CounterSeries;
  readonly duration: HistogramSeries;
}

/**
 * Records one request's counter and duration. Label sets are few and bounded: routes × methods ×
 * statuses, times (only with metrics.workspaceLabel) the listed workspaces plus `other`.
 */
export class RequestMetrics {
  private readonly counters = new Map<string, CounterSeries>();
  private readonly durations = new Map<string, HistogramSeries>();
  /**
   * Per route, the last request's labels and series: a busy gateway answers each route with the
   * same status and cache result over and over, and comparing a few values is cheaper than
   * building a map key. Routes are the router's few names.
   */
  private readonly lastByRoute = new Map<string, LastSeries>();

  constructor(private readonly metrics: GatewayMetrics) {}

  /** Counts a request and observes its duration in seconds; `workspace` is the request's, if it had one. */
  record(
    route: string,
    method: string,
    status: number,
    cache: string,
    seconds: number,
    workspace?: string,
  ): void {
    // Methods outside the API collapse into one label value so a client cannot mint new series.
    const methodLabel = method === 'GET' || method === 'HEAD' ? method : 'other';
    // Undefined unless an allow-list is configured; then a listed workspace or `other`.
    const ws = this.metrics.workspaceLabelOf(workspace);
    let last = this.lastByRoute.get(route);
    if (
      last === undefined ||
      last.method !== methodLabel ||
      last.status !== status ||
      last.cache !== cache ||
      last.ws !== ws
    ) {
      last = {
        method: methodLabel,
        status,
        cache,
        ws,
        counter: this.counter(route, methodLabel, status, ws),
        duration: this.duration(route, cache, ws),
      };
      this.lastByRoute.set(route, last);
    }
    last.counter.inc();
    last.duration.observe(seconds);
  }

  private counter(
    route: string,
    method: string,
    status: number,
    ws: string | undefined,
  ): CounterSeries {
    const key = `${route}\n${method}\n${status}\n${ws ?? ''}`;
    let counter = this.counters.get(key);
    if (counter === undefined) {
      const labels = { route, method, status: String(status) };
      counter = this.metrics.batch.counter(
        this.metrics.httpRequests,
        ws === undefined ? labels : { ...labels, workspace: ws },
      );
      this.counters.set(key, counter);
    }
    return counter;
  }

  private duration(route: string, cache: string, ws: string | undefined): HistogramSeries {
    const key = `${route}\n${cache}\n${ws ?? ''}`;
    let duration = this.durations.get(key);
    if (duration === undefined) {
      duration = this.metrics.httpDuration.series(
        ws === undefined ? { route, cache } : { route, cache, workspace: ws },
      );
      this.durations.set(key, duration);
    }
    return duration;
  }
}
