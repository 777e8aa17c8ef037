/**
 * Which served hits the auditor revalidates: a share of them (cache.audit.sampleRatio), never more
 * than cache.audit.maxPerSecond. Asked on every hit, so the common answer costs one decrement:
 * the number of hits to skip before the next sample is drawn once per sample (a geometric gap,
 * the same law as one Bernoulli draw per hit), not once per hit.
 */

/** The two limits, read at each sample so a reload applies from the next one. */
export interface SampleLimits {
  readonly sampleRatio: number;
  readonly maxPerSecond: number;
}

/** Per-instance sampler of hits. */
export class AuditSampler {
  /** Hits still to pass before the next one is sampled. */
  private skip: number;
  /** Tokens of the per-second bucket (capacity maxPerSecond, refilled continuously). */
  private tokens = 0;
  private refilledAt: number;
  private ratio: number;

  constructor(
    private readonly limits: () => SampleLimits,
    private readonly now: () => number,
    private readonly random: () => number,
  ) {
    this.ratio = limits().sampleRatio;
    this.skip = this.gap();
    this.refilledAt = now();
  }

  /** True when this hit is to be audited. */
  take(): boolean {
    if (--this.skip > 0) return false;
    const limits = this.limits();
    this.ratio = limits.sampleRatio;
    this.skip = this.gap();
    if (limits.sampleRatio <= 0) return false;
    const now = this.now();
    const elapsed = Math.max(0, now - this.refilledAt) / 1000;
    this.refilledAt = now;
    this.tokens = Math.min(limits.maxPerSecond, this.tokens + elapsed * limits.maxPerSecond);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /**
   * Hits until the next sample, counting that one: geometric with success `ratio`, so each hit
   * is sampled with that chance independently of the others. With the auditor off (ratio 0)
   * every hit re-reads the limits, so a reload that turns it on applies at once.
   */
  private gap(): number {
    const ratio = this.ratio;
    if (ratio >= 1) return 1;
    if (ratio <= 0) return 1;
    const u = 1 - this.random();
    return Math.min(2 ** 31, 1 + Math.floor(Math.log(u) / Math.log(1 - ratio)));
  }
}
