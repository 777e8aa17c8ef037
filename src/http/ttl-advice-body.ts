/**
 * GET /admin/ttl-advice's JSON answer (openapi/recordings-gateway.yaml, TtlAdvice): durations in
 * seconds and snake_case names, as the other admin answers; shares from 0 to 1.
 */
import type { WorkspaceId } from '../brands.js';
import type { WorkspaceAdvice } from '../cache/ttl-advice/advisor.js';
import type { ResourceAdvice, TtlBudget } from '../cache/ttl-advice/recommend.js';

/** The answer's body, as ttlAdviceBody writes it. */
export interface TtlAdviceBody {
  readonly workspace: string;
  readonly observed_seconds: number;
  readonly sampling_rate: number;
  readonly sampled_keys: number;
  readonly budget: { max_stale_share: number | null; max_upstream_per_second: number | null };
  readonly resources: ReadonlyArray<{
    readonly resource: ResourceAdvice['resource'];
    readonly current_ttl_seconds: number;
    readonly requests_per_second: number;
    readonly change_rate: {
      per_second: number | null;
      mean_seconds_between_changes: number | null;
      observations: { unchanged: number; changed: number };
    };
    readonly candidates: ReadonlyArray<{
      ttl_seconds: number;
      hit_ratio: number;
      upstream_per_second: number;
      stale_share: number | null;
      current: boolean;
      within_budget: boolean;
    }>;
    readonly recommended_ttl_seconds: number | null;
    readonly reason: string;
  }>;
}

/** The answer's body for a workspace's advice under `budget`. */
export function ttlAdviceBody(advice: WorkspaceAdvice, budget: TtlBudget): TtlAdviceBody {
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

/** The advice and budget a body was written from (a worker's answer, read by its primary). */
export function adviceOfBody(body: TtlAdviceBody): { advice: WorkspaceAdvice; budget: TtlBudget } {
  return {
    advice: {
      workspace: body.workspace as WorkspaceId,
      observedSeconds: body.observed_seconds,
      samplingRate: body.sampling_rate,
      sampledKeys: body.sampled_keys,
      resources: body.resources.map((resource): ResourceAdvice => ({
        resource: resource.resource,
        currentTtlMs: Math.round(resource.current_ttl_seconds * 1000),
        requestsPerSecond: resource.requests_per_second,
        changeRate: {
          perSecond: resource.change_rate.per_second,
          unchanged: resource.change_rate.observations.unchanged,
          changed: resource.change_rate.observations.changed,
        },
        candidates: resource.candidates.map((c) => ({
          ttlMs: Math.round(c.ttl_seconds * 1000),
          hitRatio: c.hit_ratio,
          upstreamPerSecond: c.upstream_per_second,
          staleShare: c.stale_share,
          current: c.current,
          withinBudget: c.within_budget,
        })),
        recommendedTtlMs:
          resource.recommended_ttl_seconds === null
            ? null
            : Math.round(resource.recommended_ttl_seconds * 1000),
        reason: resource.reason,
      })),
    },
    budget: {
      maxStaleShare: body.budget.max_stale_share,
      maxUpstreamPerSecond: body.budget.max_upstream_per_second,
    },
  };
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
