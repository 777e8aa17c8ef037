/**
 * /metrics over every worker: the primary asks each worker for its registry as JSON over IPC and
 * sums them with prom-client's AggregatorRegistry.aggregate (gauges marked `min`/`max` in
 * metrics.ts, and prom-client's process metrics, use their own aggregators). Its clusterMetrics()
 * is not used: it reads the registries given to a module-level setRegistries, and each app here
 * owns its registry. No worker label is added, so the series stay those of one process.
 *
 * A worker that exits takes its counts with it; without them the sums would drop, and Prometheus
 * reads a drop as a counter reset (rate() would count the whole remainder again). So the counters
 * and histograms of exited workers are kept, as of their last scrape, and added to every sum.
 */
import type { Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { isMessage, type MetricsReply, type MetricsRequest } from './messages.js';

/** How long one worker may take to answer; a worker that does not is left out of that scrape. */
const REPLY_TIMEOUT_MS = 2000;

/** Metric types whose sums only grow; gauges of an exited worker describe nothing any more. */
const MONOTONIC = new Set(['counter', 'histogram']);

/** Pending metrics requests to workers, by request id, and what exited workers counted. */
export class WorkerMetrics {
  private nextId = 1;
  private readonly pending = new Map<number, (metrics: object[] | undefined) => void>();
  /** Each live worker's metrics at its last scrape, by cluster worker id. */
  private readonly last = new Map<number, object[]>();
  /** Exited workers' counters and histograms, summed into one set (bounded however many exit). */
  private retired: Promise<object[]> = Promise.resolve([]);

  /** Routes a worker's message; true when it was a metrics reply. */
  onMessage(message: unknown): boolean {
    if (!isMessage<MetricsReply>(message, 'recgw:metrics')) return false;
    this.pending.get(message.id)?.(message.metrics);
    return true;
  }

  /** Keeps an exited worker's counters and histograms (as of its last scrape) in every later sum. */
  retire(worker: Worker): void {
    const last = this.last.get(worker.id);
    this.last.delete(worker.id);
    if (last === undefined) return;
    const monotonic = last.filter((metric) =>
      MONOTONIC.has(String((metric as { type?: unknown }).type)),
    );
    this.retired = this.retired.then((retired) =>
      AggregatorRegistry.aggregate([retired, monotonic]).getMetricsAsJSON(),
    );
  }

  /** The exited workers' counters and histograms. */
  retiredMetrics(): Promise<object[]> {
    return this.retired;
  }

  /** The worker's metrics as prom-client JSON, or undefined when it did not answer in time. */
  request(worker: Worker): Promise<object[] | undefined> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => settle(undefined), REPLY_TIMEOUT_MS);
      const settle = (metrics: object[] | undefined): void => {
        clearTimeout(timer);
        this.pending.delete(id);
        if (metrics !== undefined && !worker.isDead()) this.last.set(worker.id, metrics);
        resolve(metrics);
      };
      this.pending.set(id, settle);
      const message: MetricsRequest = { type: 'recgw:metrics', id };
      try {
        worker.send(message);
      } catch {
        settle(undefined);
      }
    });
  }
}

/** The Prometheus text of the workers' metrics and the primary's own registry, aggregated. */
export async function aggregateMetrics(
  workers: readonly Worker[],
  requests: WorkerMetrics,
  own: Registry,
): Promise<{ text: string; contentType: string }> {
  const replies = await Promise.all(workers.map((worker) => requests.request(worker)));
  const sources: object[][] = replies.filter((reply): reply is object[] => reply !== undefined);
  sources.push(await requests.retiredMetrics(), await own.getMetricsAsJSON());
  const aggregated = AggregatorRegistry.aggregate(sources);
  return { text: await aggregated.metrics(), contentType: aggregated.contentType };
}
