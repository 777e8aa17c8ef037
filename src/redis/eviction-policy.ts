/**
 * The start-up check of Redis's `maxmemory-policy`. Every policy is supported; they differ in
 * what memory pressure costs (README, "Redis memory policy"): `volatile-*` evicts cached values
 * only (purge state has no TTL), `allkeys-*` may also evict purge state, which the gateway
 * answers safely by dropping warmth, and `noeviction` refuses writes when full. The policy is
 * logged once and exported as `recgw_redis_maxmemory_policy_info{policy}`. The index of holders
 * expires with the values it names, so it is evicted with them under either family.
 */
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { GatewayMetrics } from '../observability/metrics.js';

/** What evicting under each policy costs the gateway, for the log line. */
const COSTS: Record<string, string> = {
  noeviction:
    'Redis refuses writes when full; cached values stop being added, purges may fail (503)',
  'volatile-lru':
    'only cached values and their purge index (they carry TTLs) are evicted; generations and the purge log are kept (an index evicted widens exact purges: index-lost)',
  'volatile-lfu':
    'only cached values and their purge index (they carry TTLs) are evicted; generations and the purge log are kept (an index evicted widens exact purges: index-lost)',
  'volatile-random':
    'only cached values and their purge index (they carry TTLs) are evicted; generations and the purge log are kept (an index evicted widens exact purges: index-lost)',
  'volatile-ttl':
    'only cached values and their purge index (they carry TTLs) are evicted; generations and the purge log are kept (an index evicted widens exact purges: index-lost)',
  'allkeys-lru':
    "purge state may be evicted: a workspace's generation hash evicted costs its L2 values, the purge log evicted costs every instance its L1",
  'allkeys-lfu':
    "purge state may be evicted: a workspace's generation hash evicted costs its L2 values, the purge log evicted costs every instance its L1",
  'allkeys-random':
    "purge state may be evicted: a workspace's generation hash evicted costs its L2 values, the purge log evicted costs every instance its L1",
};

/** Options of the check. */
export interface PolicyCheckDeps {
  readonly metrics: GatewayMetrics;
  readonly logger: Logger;
  readonly timeoutMs: number;
}

/** Reads the policy (CONFIG GET; managed Redis may refuse it: `unknown`), logs it and sets the gauge. */
export async function checkEvictionPolicy(
  client: Redis | Cluster,
  deps: PolicyCheckDeps,
): Promise<string> {
  let policy = 'unknown';
  try {
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error('timed out')), deps.timeoutMs).unref(),
    );
    const reply = await Promise.race([client.config('GET', 'maxmemory-policy'), timeout]);
    if (Array.isArray(reply) && typeof reply[1] === 'string') policy = reply[1];
  } catch {
    // CONFIG is often disabled on managed Redis; the policy then stays unknown.
  }
  deps.metrics.redisMaxmemoryPolicy.reset();
  deps.metrics.redisMaxmemoryPolicy.set({ policy }, 1);
  const cost = COSTS[policy];
  const line = {
    policy,
    cost: cost ?? 'unknown policy: assume purge state may be evicted (safe, costs warmth)',
  };
  if (policy.startsWith('allkeys-') || cost === undefined)
    deps.logger.warn(line, 'redis maxmemory-policy');
  else deps.logger.info(line, 'redis maxmemory-policy');
  return policy;
}
