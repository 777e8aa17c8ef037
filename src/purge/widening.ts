/**
 * Why an exact purge did more than its selectors name (DESIGN A10: more work, never less, and
 * said): the fixed set of reasons counted in recgw_purge_fallbacks_total{reason}, logged at warn
 * and answered as `"widened"` (docs/purge.md, "When a purge widens").
 */
import type { Logger } from 'pino';
import type { WorkspaceId } from '../brands.js';
import type { GatewayMetrics } from '../observability/metrics.js';

export const WIDEN_REASONS = [
  /** A recording named by a link code neither tier knows: which UUID and pages hold it is unknown. */
  'unknown-link-code',
  /** Redis holds no generation for the workspace (never loaded, evicted, lost). */
  'no-generation',
  /**
   * Instances of an earlier release still write values under the workspace's generation, which
   * this release's index does not name (a rollout in progress): the workspace moves whole.
   */
  'older-instances',
  /** The workspace's generation kept moving under the purge (concurrent purges). */
  'generation-moving',
  /** Redis lost part of the index (evicted) while values it named may still be held. */
  'index-lost',
  /** The selectors reach more entries than cache.purge.maxExactEntries. */
  'too-many-entries',
] as const;

/** One of WIDEN_REASONS. */
export type WidenReason = (typeof WIDEN_REASONS)[number];

/** True for a reason of the fixed set (an answer read back from Redis is checked, not trusted). */
export function isWidenReason(text: unknown): text is WidenReason {
  return (WIDEN_REASONS as readonly unknown[]).includes(text);
}

/** Says that a purge widened: counted by reason, and a warn line naming workspace and reason. */
export function widenedPurges(
  metrics: GatewayMetrics,
  logger: Logger,
): (workspace: WorkspaceId, reason: WidenReason) => void {
  return (workspace, reason) => {
    metrics.purgeFallbacks.inc({ reason });
    logger.warn({ workspace, reason }, 'purge widened: more entries dropped than it names');
  };
}
