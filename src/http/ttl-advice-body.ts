/**
 * GET /admin/ttl-advice's JSON answer (openapi/recordings-gateway.yaml, TtlAdvice): durations in
 * seconds and snake_case names, as the other admin answers; shares from 0 to 1.
 */
import type { WorkspaceAdvice } from '../cache/ttl-advice/advisor.js';
import type { TtlBudget } from '../cache/ttl-advice/recommend.js';

/** The answer's body for a workspace's advice under `budget`. */
export function ttlAdviceBody(advice: WorkspaceAdvice, budget: TtlBudget): unknown {
  return {
    workspace: advice.workspace,
    observed_seconds: round(advice.observedSeconds),
    sampling_rate: advice.samplingRate,
    sampled_keys: advice.sampledKeys,
    budget: {
      max_stale_share: budget.maxStaleShare,
      max_upstream_per_second: budget.maxUpstreamPerSecond,
    },
    resources: advice.resources.map((resource) => {
      const perSecond = resource.changeRate.perSecond;
      return {
        resource: resource.resource,
        current_ttl_seconds: resource.currentTtlMs / 1000,
        requests_per_second: resource.requestsPerSecond,
        change_rate: {
          per_second: perSecond,
          mean_seconds_between_changes:
            perSecond === null || perSecond === 0 ? null : round(1 / perSecond),
          observations: {
            unchanged: round(resource.changeRate.unchanged),
            changed: round(resource.changeRate.changed),
          },
        },
        candidates: resource.candidates.map((candidate) => ({
          ttl_seconds: candidate.ttlMs / 1000,
          hit_ratio: candidate.hitRatio,
          upstream_per_second: candidate.upstreamPerSecond,
          stale_share: candidate.staleShare,
          current: candidate.current,
          within_budget: candidate.withinBudget,
        })),
        recommended_ttl_seconds:
          resource.recommendedTtlMs === null ? null : resource.recommendedTtlMs / 1000,
        reason: resource.reason,
      };
    }),
  };
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
