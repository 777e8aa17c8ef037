/**
 * The gateway's Prometheus metrics (DESIGN A7), one registry per app so two apps can share a
 * process. Labels are bounded: never a key, an id or a workspace (except an operator's allow-list).
 */
import {
  AggregatorRegistry,
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type PrometheusContentType,
} from 'prom-client';
import { BatchedHistogram, SeriesBatch, type HistogramSnapshot } from './batched-series.js';

/** Latency buckets spanning sub-millisecond cache hits to multi-second upstream calls. */
export const LATENCY_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];
/** Remaining-validity buckets (seconds) for served transcoded_url values. */
const REMAINING_BUCKETS = [0, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400];

/** Served-age buckets (seconds): from just fetched to a day, around the usual TTLs. */
const AGE_BUCKETS = [0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 21600, 86400];

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

  /** Hot-path counter series counted locally; folded into their metrics whenever they are read. */
  readonly batch = new SeriesBatch();

  /** Requests answered on the public listener (plus `workspace` when metrics.workspaceLabel is set). */
  readonly httpRequests: Counter<'route' | 'method' | 'status' | 'workspace'>;

  /**
   * Time from request to the last byte handed to the socket, by cache outcome (plus `workspace`,
   * as above). Observed on every request, so kept outside prom-client (BatchedHistogram) and
   * exposed by {@link scrape}.
   */
  readonly httpDuration: BatchedHistogram<'route' | 'cache' | 'workspace'>;

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

  /** The L1 hit ratio estimated at ½, 1, 2 and 4 times its bound, under its policy (l1/hit-ratio-curve.ts). */
  readonly cacheL1EstimatedHitRatio = new Gauge({
    name: `${PREFIX}cache_l1_estimated_hit_ratio`,
    help: 'Share of L1 lookups an L1 of this size (a multiple of cache.l1.maxBytes), under the same cache.l1.policy, would find, estimated online by sampling keys.',
    labelNames: ['size'] as const,
    registers: [this.registry],
    // Over several workers, each with its own L1 of the configured size: their mean.
    aggregator: 'average',
  });

  /** Upstream fetches by resource and outcome (ok, not_modified, not_found, unauthorized, timeout, unreachable, invalid, rate_limited, circuit_open). */
  readonly upstreamRequests = new Counter({
    name: `${PREFIX}upstream_requests_total`,
    help: 'Upstream fetches by resource and outcome (ok, not_modified, not_found, unauthorized, timeout, unreachable, invalid, rate_limited, circuit_open).',
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
    help: "Requests answered by another request's upstream fetch (collapsed).",
    labelNames: ['resource'] as const,
    registers: [this.registry],
  });

  /** Background refreshes started, by why: `ahead` (refresh-ahead, still fresh) or `stale` (stale-while-revalidate). */
  readonly refreshes = new Counter({
    name: `${PREFIX}cache_refreshes_total`,
    help: 'Background refreshes started: ahead (refresh-ahead, before expiry) or stale (stale-while-revalidate).',
    labelNames: ['resource', 'reason'] as const,
    registers: [this.registry],
  });

  /**
   * Waits on another instance's fetch lock (cache.distributedLock), by how they ended: woken by
   * the holder's release, rechecked (the waiter's own re-check found it: a wake-up lost or
   * early), timeout (waited out `wait`, fetched itself), unavailable (Redis stopped answering).
   */
  readonly cacheLockWaits = new Counter({
    name: `${PREFIX}cache_lock_waits_total`,
    help: "Waits on another instance's fetch lock, by resource and how they ended (woken, rechecked, timeout, unavailable).",
    labelNames: ['resource', 'result'] as const,
    registers: [this.registry],
  });

  /** Answers the cache could not give, by why (cache/miss-reason.ts: a small fixed set). */
  readonly cacheMisses = new Counter({
    name: `${PREFIX}cache_misses_total`,
    help: 'Answers forwarded upstream (or collapsed onto a fetch), by resource and reason (cold, evicted, expired, client, unverified).',
    labelNames: ['resource', 'reason'] as const,
    registers: [this.registry],
    collect: this.batch.flush,
  });

  /** Audits of served hits (cache.audit) by result: consistent, inconsistent (the data had changed), error. */
  readonly cacheAudits = new Counter({
    name: `${PREFIX}cache_audit_total`,
    help: 'Sampled cache hits revalidated upstream (cache.audit), by resource and result (consistent, inconsistent: the data had changed, error).',
    labelNames: ['resource', 'result'] as const,
    registers: [this.registry],
  });

  /** Bounds of the TTL advice's memory reached (cache/ttl-advice/advisor.ts): sampled keys, workspaces. */
  readonly ttlAdviceBounds = new Counter({
    name: `${PREFIX}ttl_advice_bounds_total`,
    help: 'Times a bound of the TTL advice was reached: sampled-keys (a workspace sampled at a lower rate), workspaces (a workspace not modelled).',
    labelNames: ['bound'] as const,
    registers: [this.registry],
  });

  /** The age of each answer when served (batched, as httpDuration). */
  readonly servedAge = new BatchedHistogram({
    name: `${PREFIX}cache_served_age_seconds`,
    help: 'Age of each answer when served (seconds since its data was fetched from the upstream), by resource.',
    labelNames: ['resource'],
    buckets: AGE_BUCKETS,
  });

  /** transcoded_url re-signs by signer scheme and result (ok, error). */
  readonly resigns = new Counter({
    name: `${PREFIX}transcoded_url_resigns_total`,
    help: 'transcoded_url values re-signed by the gateway, by scheme and result.',
    labelNames: ['scheme', 'result'] as const,
    registers: [this.registry],
  });

  /** Validity left on the earliest-expiring transcoded_url of each response that carries one (batched, as httpDuration). */
  readonly urlRemaining = new BatchedHistogram({
    name: `${PREFIX}transcoded_url_remaining_seconds`,
    help: 'Seconds of validity left on the earliest-expiring transcoded_url of each response served.',
    buckets: REMAINING_BUCKETS,
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
    // Over several workers (server.workers), one whose Redis is down makes the whole instance 0.
    aggregator: 'min',
  });

  /** Cluster slots this instance cannot use now (RedisGuards.slotsDown); 0 outside Cluster mode. */
  readonly redisSlotsDown = new Gauge({
    name: `${PREFIX}redis_cluster_slots_down`,
    help: 'Redis Cluster hash slots (of 16384) without an owner that answers: none known, its connection ended, or its breaker open. Their workspaces run without L2.',
    registers: [this.registry],
    // Over several workers, the most any of them is missing.
    aggregator: 'max',
  });

  /** Failed or timed-out Redis commands by operation. */
  readonly redisErrors = new Counter({
    name: `${PREFIX}redis_errors_total`,
    help: 'Redis commands that failed or timed out, by operation.',
    labelNames: ['op'] as const,
    registers: [this.registry],
  });

  /** Redis commands refused because Redis is out of memory (maxmemory with noeviction), by operation. */
  readonly redisFull = new Counter({
    name: `${PREFIX}redis_full_total`,
    help: 'Redis commands refused for want of memory (maxmemory, noeviction), by operation; also counted in redis_errors_total.',
    labelNames: ['op'] as const,
    registers: [this.registry],
  });

  /** Redis's maxmemory-policy as read at start-up (1 on the policy's series; `unknown` when CONFIG is refused). */
  readonly redisMaxmemoryPolicy = new Gauge({
    name: `${PREFIX}redis_maxmemory_policy_info`,
    help: 'Redis\'s maxmemory-policy read at start-up (value 1 on its series; policy="unknown" when CONFIG GET is refused).',
    labelNames: ['policy'] as const,
    registers: [this.registry],
  });

  /** Seconds since the last complete read of the purge log began (-1 before the first). */
  readonly purgeLogLag = new Gauge({
    name: `${PREFIX}purge_log_lag_seconds`,
    help: 'Seconds since the last complete read of the purge log began; past cache.purge.maxLag, L1 is not served (-1: never read).',
    registers: [this.registry],
  });

  /** Times the purge log no longer reached back to the last entry read, and every generation was forgotten. */
  readonly purgeLogResets = new Counter({
    name: `${PREFIX}purge_log_resets_total`,
    help: 'Times the purge log had lost entries this instance never read (trimmed, evicted, Redis restarted empty), so every generation and L1 entry was dropped.',
    registers: [this.registry],
  });

  /** From a purge's log entry being written to this instance acknowledging it applied it (receipts). */
  readonly purgeApply = new Histogram({
    name: `${PREFIX}purge_apply_seconds`,
    help: "Seconds from a purge's log entry being written to this instance recording that it applied it (both on Redis's clock).",
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  /** Purges answered 200, by form and by mode. */
  readonly purges = new Counter({
    name: `${PREFIX}purges_total`,
    help: 'Purges answered 200, by form (scope: workspace, lists, page, recording, folder, tag) and mode (hard: dropped; soft: marked stale).',
    labelNames: ['scope', 'mode'] as const,
    registers: [this.registry],
  });

  /** Exact purges that widened to a move, by reason (purge/widening.ts). */
  readonly purgeFallbacks = new Counter({
    name: `${PREFIX}purge_fallbacks_total`,
    help: 'Exact purges (recording, folder, tag, page, soft) that widened to moving the list or whole generation, by reason (unknown-link-code, no-generation, older-instances, generation-moving, index-lost, too-many-entries).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  /** Circuit breaker state per upstream target: 0 closed, 1 half-open, 2 open. */
  readonly circuitState = new Gauge({
    name: `${PREFIX}circuit_state`,
    help: 'Upstream circuit state per target: 0 closed, 1 half-open, 2 open (worst over its origins; opened only by failures from several workspaces).',
    labelNames: ['target'] as const,
    registers: [this.registry],
    // Over several workers, the worst state any of them sees.
    aggregator: 'max',
  });

  /** Workspaces whose own upstream circuit is open (their fetches failed; others unaffected). */
  readonly workspaceCircuitsOpen = new Gauge({
    name: `${PREFIX}upstream_workspace_circuits_open`,
    help: 'Workspaces whose own upstream circuit is open after their fetches kept failing.',
    registers: [this.registry],
  });

  /** Per-key quota decisions by result (allowed, limited) and where they were counted (redis, local). */
  readonly quotaDecisions = new Counter({
    name: `${PREFIX}quota_decisions_total`,
    help: 'Per-key quota decisions by result (allowed, limited) and where the request was counted (redis, local).',
    labelNames: ['result', 'source'] as const,
    registers: [this.registry],
    collect: this.batch.flush,
  });

  /** SIGHUP reloads by result (ok, error). */
  readonly configReloads = new Counter({
    name: `${PREFIX}config_reloads_total`,
    help: 'Configuration reloads (SIGHUP) by result.',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  /** Re-reads of auth.keyFile after it changed, by result (ok, error); a failed one keeps the old keys. */
  readonly keyFileReloads = new Counter({
    name: `${PREFIX}key_file_reloads_total`,
    help: 'Re-reads of the static key file (auth.keyFile) after it changed, by result.',
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
    this.httpDuration = new BatchedHistogram({
      name: `${PREFIX}http_request_duration_seconds`,
      help: 'Public request duration in seconds, by route and cache outcome (hit, stale, refreshed, miss, collapsed, stale-error, none).',
      labelNames: ['route', 'cache', ...workspace],
      buckets: LATENCY_BUCKETS,
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

  /** The batched histograms' samples, in prom-client's JSON shape. */
  async batchedJson(): Promise<HistogramSnapshot[]> {
    return Promise.all([this.httpDuration.get(), this.urlRemaining.get(), this.servedAge.get()]);
  }

  /** Every metric, the registry's and the batched ones, in prom-client's JSON shape (a cluster primary sums its workers'). */
  async json(): Promise<Array<{ name: string; type: unknown; values: unknown[] }>> {
    for (const hook of this.scrapeHooks) hook();
    return [...(await this.registry.getMetricsAsJSON()), ...(await this.batchedJson())];
  }

  /**
   * The Prometheus text exposition: the registry, merged with a registry built from the batched
   * histograms' samples by prom-client's public AggregatorRegistry.aggregate (the function it
   * uses to expose cluster workers' metrics), so prom-client renders every line.
   */
  async scrape(): Promise<string> {
    for (const hook of this.scrapeHooks) hook();
    const batched = AggregatorRegistry.aggregate<PrometheusContentType>([await this.batchedJson()]);
    return Registry.merge([this.registry, batched]).metrics();
  }
}
