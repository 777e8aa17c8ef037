/**
 * How often a resource's data changes upstream, estimated from revalidations. Every refresh (and
 * every audit) asks the upstream whether the data it holds is still current: a `304` (or the same
 * data) after age `a` says "unchanged for `a`"; new data says "changed at least once within `a`".
 * The time of the change itself is never seen.
 *
 * Model: each resource's data changes as a Poisson process of rate μ (Cho and Garcia-Molina,
 * "Estimating frequency of change", ACM TOIT 2003, irregular access). An interval of length `a`
 * is unchanged with probability e^(−μa) and changed with 1 − e^(−μa), so over the observations
 *
 *   log L(μ) = −μ·Σ_unchanged a_i + Σ_changed log(1 − e^(−μ a_j))
 *   d/dμ     = −A + Σ_changed a_j / (e^(μ a_j) − 1),      A = Σ_unchanged a_i
 *
 * The second term falls from +∞ to 0 as μ grows, so with at least one change and some unchanged
 * time the likelihood has one maximum, found by bisection on log μ. The intervals are chosen by
 * the readers, not by the changes, which is what makes them usable as they come.
 *
 * Bounded memory per estimate: A is a sum, and the changed intervals are counted in logarithmic
 * buckets (four per doubling) whose geometric middle stands for each; the likelihood moves little
 * within a bucket. Everything decays with a half-life, so the estimate follows the data's
 * recent behaviour rather than the process's whole life.
 */

/** Ages below this (ms) share the first bucket: a refresh sooner than this says little. */
const MIN_AGE_MS = 100;
/** Buckets per doubling of age. */
const PER_DOUBLING = 4;
/** Doublings covered from MIN_AGE_MS: up to about 1.2 days; longer ages share the last bucket. */
const DOUBLINGS = 20;
const BUCKETS = PER_DOUBLING * DOUBLINGS + 1;
/** Rates searched, per second: once a year to ten times a second. */
const MIN_RATE = 1 / (365 * 86_400);
const MAX_RATE = 10;

/** An estimate as the advice reports it. */
export interface ChangeRate {
  /** Changes per second, by maximum likelihood; 0 while no change was seen, null with no observation. */
  readonly perSecond: number | null;
  /** Observations behind it (decayed): intervals found unchanged, and changed. */
  readonly unchanged: number;
  readonly changed: number;
}

/** The change-rate estimate of one resource kind in one workspace. */
export class ChangeRateEstimate {
  /** Σ of unchanged intervals, seconds (decayed). */
  #unchangedSeconds = 0;
  #unchanged = 0;
  #changed = 0;
  readonly #changedByAge = new Float64Array(BUCKETS);
  #decayedAt: number | undefined;

  /** `halfLifeMs`: after this long an observation weighs half. */
  constructor(private readonly halfLifeMs: number) {}

  /** One revalidation: the data was known current `ageMs` before `now`, and is now `changed` or not. */
  observe(ageMs: number, changed: boolean, now: number): void {
    if (!(ageMs >= 0) || !Number.isFinite(ageMs)) return;
    this.#decay(now);
    if (changed) {
      this.#changed++;
      this.#changedByAge[bucketOf(ageMs)]! += 1;
    } else {
      this.#unchanged++;
      this.#unchangedSeconds += ageMs / 1000;
    }
  }

  /** The estimate as of now (decayed to `now`). */
  rate(now: number): ChangeRate {
    this.#decay(now);
    return {
      perSecond: this.#perSecond(),
      unchanged: this.#unchanged,
      changed: this.#changed,
    };
  }

  #perSecond(): number | null {
    if (this.#unchanged + this.#changed < 1e-9) return null;
    if (this.#changed < 1e-9) return 0;
    if (this.#unchangedSeconds <= 0) return MAX_RATE;
    // Bisection on log μ of the likelihood's derivative, which falls as μ grows.
    let low = Math.log(MIN_RATE);
    let high = Math.log(MAX_RATE);
    if (this.#slope(Math.exp(low)) <= 0) return MIN_RATE;
    if (this.#slope(Math.exp(high)) >= 0) return MAX_RATE;
    for (let i = 0; i < 60; i++) {
      const mid = (low + high) / 2;
      if (this.#slope(Math.exp(mid)) > 0) low = mid;
      else high = mid;
    }
    return Math.exp((low + high) / 2);
  }

  /** d log L / dμ at μ (per second). */
  #slope(mu: number): number {
    let sum = -this.#unchangedSeconds;
    for (let b = 0; b < BUCKETS; b++) {
      const count = this.#changedByAge[b]!;
      if (count === 0) continue;
      const a = ageOfBucket(b) / 1000;
      // a / (e^(μa) − 1), written with expm1 so a small μa keeps its precision.
      sum += (count * a) / Math.expm1(mu * a);
    }
    return sum;
  }

  #decay(now: number): void {
    const since = this.#decayedAt === undefined ? 0 : now - this.#decayedAt;
    if (this.#decayedAt !== undefined && since < 1000) return;
    this.#decayedAt = now;
    if (since <= 0) return;
    const keep = 2 ** (-since / this.halfLifeMs);
    this.#unchangedSeconds *= keep;
    this.#unchanged *= keep;
    this.#changed *= keep;
    for (let b = 0; b < BUCKETS; b++) this.#changedByAge[b]! *= keep;
  }
}

function bucketOf(ageMs: number): number {
  if (ageMs <= MIN_AGE_MS) return 0;
  return Math.min(BUCKETS - 1, Math.round(PER_DOUBLING * Math.log2(ageMs / MIN_AGE_MS)));
}

/** The age a bucket stands for: the middle of its range on the log scale. */
function ageOfBucket(bucket: number): number {
  return MIN_AGE_MS * 2 ** (bucket / PER_DOUBLING);
}
