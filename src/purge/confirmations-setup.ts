/**
 * Builds purge confirmations for one instance (DESIGN A10): with Redis, this instance's liveness
 * and acknowledgements (renewed once Redis answers, withdrawn on close), receipts, and replica
 * acknowledgements; without Redis, answers from this instance alone.
 */
import type { GatewayMetrics } from '../observability/metrics.js';
import type { SharedRedis } from '../redis/shared-redis.js';
import { PurgeConfirmations } from './confirmations.js';
import { ReplicaAcknowledgement } from './durable-write.js';
import { PurgeLiveness } from './liveness.js';
import { PurgeReceipts } from './receipts.js';
import type { RedisPurgeStore } from './redis-store.js';

/** What confirmations need besides Redis. */
export interface ConfirmationSettings {
  readonly instanceId: string;
  /** cache.purge.instanceExpiry (ms). */
  readonly instanceExpiryMs: number;
  /** cache.purge.replicaTimeout (ms). */
  readonly replicaTimeoutMs: () => number;
  /** cache.redis.commandTimeout (ms). */
  readonly commandTimeoutMs: number;
  readonly metrics: GatewayMetrics;
}

/** Wires liveness to the purge log and returns the confirmations the admin handler answers with. */
export function purgeConfirmations(
  redis: SharedRedis | null,
  store: RedisPurgeStore | null,
  settings: ConfirmationSettings,
): PurgeConfirmations {
  if (redis === null || store === null) return new PurgeConfirmations(null, null);
  const liveness = new PurgeLiveness({
    redis,
    instanceId: settings.instanceId,
    expiryMs: settings.instanceExpiryMs,
    applied: () => store.appliedThrough,
    observeApply: (seconds) => settings.metrics.purgeApply.observe(seconds),
  });
  // Each complete read of the log may have applied entries: acknowledge them at once.
  store.onPurge({ forget: () => {}, forgetAll: () => {}, synced: () => liveness.update() });
  redis.onAnswering(() => liveness.start());
  redis.onClose(() => void liveness.leave());
  return new PurgeConfirmations(
    new PurgeReceipts(redis),
    new ReplicaAcknowledgement(redis, settings.replicaTimeoutMs, settings.commandTimeoutMs),
  );
}
