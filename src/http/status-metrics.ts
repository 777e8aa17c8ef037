/**
 * Turns one request's cache status into the cache metrics (recgw_cache_lookups_total,
 * recgw_coalesced_requests_total, recgw_cache_refreshes_total, recgw_cache_misses_total): the one place they are counted, hits included. Every series
 * is resolved once and counted locally (batched-series.ts), so a hit pays a few property reads.
 */
import type { CacheStatus, LookupResult } from '../cache/status.js';
import type { Outcome } from '../cache/lookup.js';
import { MISS_REASONS, type MissReason } from '../cache/miss-reason.js';
import type { CounterSeries } from '../observability/batched-series.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { Resource } from '../upstream/types.js';

type ByResult = Readonly<Record<LookupResult, CounterSeries>>;

interface ResourceSeries {
  readonly l1: ByResult;
  readonly l2: ByResult;
  readonly coalesced: CounterSeries;
  readonly ahead: CounterSeries;
  readonly stale: CounterSeries;
  readonly misses: Readonly<Record<MissReason, CounterSeries>>;
}

/** The cache metrics of requests, from their status. */
export class StatusMetrics {
  private readonly series: Readonly<Record<Resource, ResourceSeries>>;

  constructor(metrics: GatewayMetrics) {
    const byResult = (resource: Resource, tier: 'l1' | 'l2'): ByResult => ({
      hit: metrics.batch.counter(metrics.cacheLookups, { resource, tier, result: 'hit' }),
      stale: metrics.batch.counter(metrics.cacheLookups, { resource, tier, result: 'stale' }),
      miss: metrics.batch.counter(metrics.cacheLookups, { resource, tier, result: 'miss' }),
    });
    const of = (resource: Resource): ResourceSeries => ({
      l1: byResult(resource, 'l1'),
      l2: byResult(resource, 'l2'),
      coalesced: metrics.batch.counter(metrics.coalesced, { resource }),
      ahead: metrics.batch.counter(metrics.refreshes, { resource, reason: 'ahead' }),
      stale: metrics.batch.counter(metrics.refreshes, { resource, reason: 'stale' }),
      misses: Object.fromEntries(
        MISS_REASONS.map((reason) => [
          reason,
          metrics.batch.counter(metrics.cacheMisses, { resource, reason }),
        ]),
      ) as Record<MissReason, CounterSeries>,
    });
    this.series = { list: of('list'), recording: of('recording') };
  }

  /** Counts what the cache did for one request of `resource`, answered as `outcome`. */
  record(resource: Resource, status: CacheStatus, outcome: Outcome | 'none'): void {
    const series = this.series[resource];
    if (status.l1 !== undefined) series.l1[status.l1].inc();
    if (status.l2 !== undefined) series.l2[status.l2].inc();
    if (status.coalesced) series.coalesced.inc();
    if (status.refresh !== 'none') series[status.refresh].inc();
    // A forwarded answer; one that found no reason (none is left unset by the flow) counts as cold.
    if (outcome === 'miss' || outcome === 'collapsed')
      series.misses[status.missReason ?? 'cold'].inc();
  }
}
