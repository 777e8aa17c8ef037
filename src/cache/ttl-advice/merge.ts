/**
 * The advice of several workers of one process (server.workers) as one: each worker sees its
 * share of the requests and keeps its own L1, so the process's upstream requests are the sum of
 * the workers', its hit ratio and stale share their means weighted by requests (the stale share
 * over the workers that know a change rate), and its change rate the workers' estimates weighted
 * by the revalidations behind each (close to the estimate over all of them, which only the
 * workers' observations could give exactly). The budget check and recommendation are made again
 * on the merged figures. */
import type { WorkspaceAdvice } from './advisor.js';
import { adviseResource, type ResourceAdvice, type TtlBudget } from './recommend.js';
import type { TtlPrediction } from './request-model.js';

/** One advice for a workspace from each worker that has seen it (at least one). */
export function mergeAdvice(
  advices: readonly WorkspaceAdvice[],
  budget: TtlBudget,
): WorkspaceAdvice {
  const first = advices[0]!;
  return {
    workspace: first.workspace,
    observedSeconds: Math.max(...advices.map((advice) => advice.observedSeconds)),
    samplingRate: Math.min(...advices.map((advice) => advice.samplingRate)),
    sampledKeys: advices.reduce((sum, advice) => sum + advice.sampledKeys, 0),
    resources: first.resources.map((resource) =>
      mergeResource(
        advices.flatMap((advice) =>
          advice.resources.filter((each) => each.resource === resource.resource),
        ),
        budget,
      ),
    ),
  };
}

function mergeResource(parts: readonly ResourceAdvice[], budget: TtlBudget): ResourceAdvice {
  const first = parts[0]!;
  const requestsPerSecond = sum(parts.map((part) => part.requestsPerSecond));
  const unchanged = sum(parts.map((part) => part.changeRate.unchanged));
  const changed = sum(parts.map((part) => part.changeRate.changed));
  const rated = parts.filter((part) => part.changeRate.perSecond !== null);
  const weights = rated.map((part) => part.changeRate.unchanged + part.changeRate.changed);
  const perSecond =
    rated.length === 0
      ? null
      : sum(rated.map((part, i) => part.changeRate.perSecond! * weights[i]!)) / sum(weights);
  const ttls = [...new Set(parts.flatMap((part) => part.candidates.map((c) => c.ttlMs)))];
  const predictions: TtlPrediction[] = ttls.map((ttlMs) => {
    const at = parts.flatMap((part) => {
      const candidate = part.candidates.find((c) => c.ttlMs === ttlMs);
      return candidate === undefined ? [] : [{ candidate, weight: part.requestsPerSecond }];
    });
    const weight = sum(at.map((each) => each.weight)) || 1;
    // A worker with no change rate yet has no stale share (null), not a share of 0.
    const staled = at.filter(({ candidate }) => candidate.staleShare !== null);
    const staledWeight = sum(staled.map((each) => each.weight)) || 1;
    return {
      ttlMs,
      hitRatio: sum(at.map(({ candidate, weight: w }) => candidate.hitRatio * w)) / weight,
      upstreamPerSecond: sum(at.map(({ candidate }) => candidate.upstreamPerSecond)),
      staleShare:
        sum(staled.map(({ candidate, weight: w }) => candidate.staleShare! * w)) / staledWeight,
    };
  });
  return adviseResource({
    resource: first.resource,
    currentTtlMs: first.currentTtlMs,
    requestsPerSecond,
    changeRate: { perSecond, unchanged, changed },
    predict: () => predictions.sort((a, b) => a.ttlMs - b.ttlMs),
    budget,
  });
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
