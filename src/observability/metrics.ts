/**
 * The gateway's Prometheus metrics (DESIGN A7), one registry per app so two apps can share a
 * process. Labels are bounded: never a key, an id or a workspace (except an operator's allow-list).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { SeriesBatch } from './batched-series.js';

/** Latency buckets spanning sub-millisecond cache hits to multi-second upstream calls. */
export const LATENCY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Remaining-validity buckets (seconds) for served transcoded_url values. */
const REMAINING_BUCKETS = [0, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400];

const PREFIX = 'recgw_';

/** Options of {@link GatewayMetrics}. */
export interface GatewayMetricsOptions {
  /** Register prom-client's default process metrics (default true). */
  defaultMetrics?: boolean;
  /** metrics.workspaceLabel: workspaces broken out in a `workspace` label on the two http_request metrics. */
  workspaceLabel?: readonly string[];
}

/** All gateway metrics; the fields are prom-client metrics ready to `inc`/`observe`/`set`. */
export class GatewayMetrics {
  readonly registry = new Registry();

  /** Hot-path series counted locally; folded into the four metrics below whenever they are read. */
  readonly batch = new SeriesBatch();

  /** Requests answered on the public listener (plus `workspace` when metrics.workspaceLabel is set). */
  readonly httpRequests: Counter<'route' | 'method' | 'status' | 'workspace'>;

  /** Time from request to the last byte handed to the socket, by cache outcome (plus `workspace`, as above). */
  readonly httpDuration: Histogram<'route' | 'cache' | 'workspace'>;

  /** The workspaces broken out in the `workspace` label; empty: no such label at all. */
  private readonly labelledWorkspaces: ReadonlySet<string>;

  /** Cache lookups by resource (list, recording), tier (l1, l2) and result (hit, stale, miss). */
  readonly cacheLookups = new Counter({
    name: `${PREFIX}cache_lookups_total`,
    help: 'Cache lookups by resource, tier and result (hit, stale, miss).',
    labelNames: ['resource', 'tier', 'result'] as const,
    registers: [this.registry],
    collect: this.batch.flush,
  });

  /** Entries held per tier (L1 exact; L2 is not counted, it is shared). */
  readonly cacheEntries = new Gauge({
    name: `${PREFIX}cache_entries`,
    help: 'Entries held in the cache tier of this instance.',
    labelNames: ['tier'] as const,
    registers: [this.registry],
  });

  /** Bytes held per tier (as accounted by the L1 size bound). */
  readonly cacheBytes = new Gauge({
    name: `${PREFIX}cache_bytes`,
    help: 'Bytes held in the cache tier of this instance, as counted against its bound.',
    labelNames: ['tier'] as const,
    registers: [this.registry],
  });

  /** Entries evicted to stay within the byte bound. */
  readonly cacheEvictions = new Counter({
    name: `${PREFIX}cache_evictions_total`,
    help: 'Entries evicted to stay within the tier bound.',
    labelNames: ['tier'] as const,
    registers: [this.registry],
  });

  /** Upstream fetches by resource and outcome (ok, not_found, unauthorized, timeout, unreachable, invalid, rate_limited, circuit_open). */
  readonly upstreamRequests = new Counter({
    name: `${PREFIX}upstream_requests_total`,
    help: 'Upstream fetches by resource and outcome (ok, not_found, unauthorized, timeout, unreachable, invalid, rate_limited, circuit_open).',
    labelNames: ['resource', 'outcome'] as const,
    registers: [this.registry],
  });

  /** Upstream fetch duration, retries included. */
  readonly upstreamDuration = new Histogram({
    name: `${PREFIX}upstream_request_duration_seconds`,
    help: 'Upstream fetch duration in seconds, retries included.',
    labelNames: ['resource'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  /** Requests that waited on another request's fetch instead of fetching themselves. */
  readonly coalesced = new Counter({
    name: `${PREFIX}coalesced_requests_total`,
    help: 'Requests answered by another request\'s upstream fetch (collapsed).',
    labelNames: ['resource'] as const,
    registers: [this.registry],
  });

  /** transcoded_url re-signs by signer scheme and result (ok, error). */
  readonly resigns = new Counter({
    name: `${PREFIX}transcoded_url_resigns_total`,
    help: 'transcoded_url values re-signed by the gateway, by scheme and result.',
    labelNames: ['scheme', 'result'] as const,
    registers: [this.registry],
  });

  /** Validity left on the earliest-expiring transcoded_url of each response that carries one. */
  readonly urlRemaining = new Histogram({
    name: `${PREFIX}transcoded_url_remaining_seconds`,
    help: 'Seconds of validity left on the earliest-expiring transcoded_url of each response served.',
    buckets: REMAINING_BUCKETS,
    registers: [this.registry],
    collect: this.batch.flush,
  });

  /** Key verdicts by source (static, l1, l2, upstream, limiter) and result (valid, invalid, rate_limited). */
  readonly authResults = new Counter({
    name: `${PREFIX}auth_results_total`,
    help: 'API key verdicts by source (static, l1, l2, upstream, limiter) and result (valid, invalid, rate_limited).',
    labelNames: ['source', 'result'] as const,
    registers: [this.registry],
    collect: this.batch.flush,
  });

  /** 1 while the Redis tier answers, 0 when down or not configured. */
  readonly redisUp = new Gauge({
    name: `${PREFIX}redis_up`,
    help: '1 while the Redis tier is connected and answering, 0 otherwise.',
    registers: [this.registry],
  });

  /** Failed or timed-out Redis commands by operation. */
  readonly redisErrors = new Counter({
    name: `${PREFIX}redis_errors_total`,
    help: 'Redis commands that failed or timed out, by operation.',
    labelNames: ['op'] as const,
    registers: [this.registry],
  });

  /** Circuit breaker state per upstream target: 0 closed, 1 half-open, 2 open. */
  readonly circuitState = new Gauge({
    name: `${PREFIX}circuit_state`,
    help: 'Upstream circuit state per target: 0 closed, 1 half-open, 2 open (worst over its origins).',
    labelNames: ['target'] as const,
    registers: [this.registry],
  });

  /** SIGHUP reloads by result (ok, error). */
  readonly configReloads = new Counter({
    name: `${PREFIX}config_reloads_total`,
    help: 'Configuration reloads (SIGHUP) by result.',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  constructor(options: GatewayMetricsOptions = {}) {
    this.labelledWorkspaces = new Set(options.workspaceLabel ?? []);
    // The label exists only when an operator asked for it, so default series stay exactly as in A7.
    const workspace = this.labelledWorkspaces.size > 0 ? (['workspace'] as const) : ([] as const);
    this.httpRequests = new Counter({
      name: `${PREFIX}http_requests_total`,
      help: 'Requests answered on the public listener, by route, method and status.',
      labelNames: ['route', 'method', 'status', ...workspace],
      registers: [this.registry],
      collect: this.batch.flush,
    });
    this.httpDuration = new Histogram({
      name: `${PREFIX}http_request_duration_seconds`,
      help: 'Public request duration in seconds, by route and cache outcome (hit, stale, miss, collapsed, stale-error, none).',
      labelNames: ['route', 'cache', ...workspace],
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
      collect: this.batch.flush,
    });
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
    this.redisUp.set(0);
  }

  /**
   * The `workspace` label value for a request: undefined when no allow-list is configured (the
   * label does not exist), the workspace when listed, else `other`, so no client can mint a series.
   */
  workspaceLabelOf(workspace: string | undefined): string | undefined {
    if (this.labelledWorkspaces.size === 0) return undefined;
    return workspace !== undefined && this.labelledWorkspaces.has(workspace) ? workspace : 'other';
  }

  private readonly scrapeHooks: Array<() => void> = [];

  /** Registers a function that refreshes gauges (cache sizes) just before each scrape. */
  onScrape(hook: () => void): void {
    this.scrapeHooks.push(hook);
  }

  /** The Prometheus text exposition. */
  async scrape(): Promise<string> {
    for (const hook of this.scrapeHooks) hook();
    return this.registry.metrics();
  }
}
