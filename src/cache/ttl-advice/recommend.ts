/**
 * The recommended TTL of one resource under cache.ttlBudget. With `maxStaleShare`: the longest
 * candidate whose answers served after their data changed stay within it (the fewest upstream
 * requests the staleness budget allows). With only `maxUpstreamPerSecond`: the shortest candidate
 * within it (the freshest answers the upstream budget allows). With both, both must hold and the
 * longest wins. No candidate within the budget: no recommendation, and the reason says why.
 */
import type { Resource } from '../../upstream/types.js';
import type { ChangeRate } from './change-rate.js';
import type { TtlPrediction } from './request-model.js';

/** cache.ttlBudget: at least one of the two is set. */
export interface TtlBudget {
  /** Most share of answers served after their data changed, 0 to 1; null: no limit. */
  readonly maxStaleShare: number | null;
  /** Most upstream requests per second per resource of a workspace; null: no limit. */
  readonly maxUpstreamPerSecond: number | null;
}

/** One candidate TTL's prediction, as the advice reports it. */
export interface CandidateAdvice extends Omit<TtlPrediction, 'staleShare'> {
  /** Null while the change rate is unknown (no revalidation seen). */
  readonly staleShare: number | null;
  readonly current: boolean;
  readonly withinBudget: boolean;
}

/** The advice for one resource of a workspace. */
export interface ResourceAdvice {
  readonly resource: Resource;
  readonly currentTtlMs: number;
  /** Requests per second for this resource (scaled up from the sample). */
  readonly requestsPerSecond: number;
  readonly changeRate: ChangeRate;
  readonly candidates: readonly CandidateAdvice[];
  /** The TTL to set, or null (reason says why). */
  readonly recommendedTtlMs: number | null;
  readonly reason: string;
}

/** What adviseResource needs: the resource's figures and the budget. */
export interface ResourceFigures {
  readonly resource: Resource;
  readonly currentTtlMs: number;
  readonly requestsPerSecond: number;
  readonly changeRate: ChangeRate;
  /** The prediction of every simulated TTL at a change rate. */
  readonly predict: (changesPerSecond: number) => readonly TtlPrediction[];
  readonly budget: TtlBudget;
}

/** Predictions, budget check and recommendation for one resource. */
export function adviseResource(figures: ResourceFigures): ResourceAdvice {
  const { resource, currentTtlMs, requestsPerSecond, changeRate, budget } = figures;
  const mu = changeRate.perSecond;
  const candidates = figures.predict(mu ?? 0).map((prediction): CandidateAdvice => {
    const staleShare = mu === null ? null : prediction.staleShare;
    return {
      ...prediction,
      staleShare,
      current: prediction.ttlMs === currentTtlMs,
      withinBudget: within(budget, staleShare, prediction.upstreamPerSecond),
    };
  });
  const base = { resource, currentTtlMs, requestsPerSecond, changeRate, candidates };
  if (candidates.length === 0)
    return { ...base, recommendedTtlMs: null, reason: 'no request for this resource seen yet' };
  if (budget.maxStaleShare !== null && mu === null)
    return {
      ...base,
      recommendedTtlMs: null,
      reason: 'no revalidation seen yet: the change rate, and so the stale share, is unknown',
    };
  const fitting = candidates.filter((candidate) => candidate.withinBudget);
  if (fitting.length === 0)
    return {
      ...base,
      recommendedTtlMs: null,
      reason: 'no candidate TTL is within cache.ttlBudget',
    };
  const longest = budget.maxStaleShare !== null;
  const chosen = longest ? fitting[fitting.length - 1]! : fitting[0]!;
  return {
    ...base,
    recommendedTtlMs: chosen.ttlMs,
    reason: longest
      ? 'the longest TTL within cache.ttlBudget'
      : 'the shortest TTL within cache.ttlBudget.maxUpstreamPerSecond',
  };
}

function within(budget: TtlBudget, staleShare: number | null, upstreamPerSecond: number): boolean {
  if (budget.maxStaleShare !== null && (staleShare === null || staleShare > budget.maxStaleShare))
    return false;
  return budget.maxUpstreamPerSecond === null || upstreamPerSecond <= budget.maxUpstreamPerSecond;
}
