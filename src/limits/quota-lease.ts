/**
 * A lease: consecutive slots of a key's quota reserved by one call to the shared count
 * (gcra-script.ts, or the primary of a cluster), spent on this instance without a round trip.
 *
 * Why no key is admitted beyond its quota: every admitted request, on any instance, spends its
 * own slot of the key's one timeline, the slots never overlap (the shared TAT only moves
 * forward past each grant), and a slot ending at s is spent at an instant a with s − window <= a
 * < s, exactly as the GCRA places a request it decides itself. s − window <= a holds because the
 * grant was conformant when the store decided it, before a. a < s is checked here, against an
 * upper bound of the store's clock: its reading when it decided, plus the local time since the
 * call was sent (it read its clock after that). So over any span, admitted requests are within
 * the GCRA's own bound (a burst of at most `requests`, then one per interval). Slots the
 * instance does not spend in time are lost, as the GCRA would have let that time pass anyway.
 * The requests already waiting when the call was sent (`prepaid`) take their slots whatever the
 * time: they arrived before the store decided, like a request it decides alone.
 */
import {
  slotEnd,
  type QuotaDecision,
  type QuotaPolicy,
  type Reservation,
  type Tat,
} from './gcra.js';

/**
 * The longest a lease is spent: it bounds how far apart two machines' clock rates can carry the
 * local estimate of the store's clock, and how long unspent slots stay out of other instances'
 * reach when the key's TAT was ahead of now.
 */
const LEASE_MAX_MS = 1_000;

/** Slots reserved by one call, and how many of them are spent. */
export class QuotaLease {
  private spent = 0;
  private readonly windowUs: number;
  /** One interval, window / requests µs, as a whole part and a remainder in 1/requests µs. */
  private readonly stepQ: number;
  private readonly stepRem: number;
  /** Where the last granted slot ends: the TAT the grant left. */
  private readonly end: Tat;

  constructor(
    private readonly reservation: Reservation,
    private readonly policy: QuotaPolicy,
    /** Local monotonic ms when the reserving call was sent. */
    private readonly sentMs: number,
    /** Slots owed to the requests that were waiting when the call was sent. */
    private readonly prepaid: number,
    /** How long the lease's slots were meant to last (ms). */
    private readonly spanMs: number,
  ) {
    this.windowUs = Math.round(policy.windowMs * 1000);
    this.stepRem = this.windowUs % policy.requests;
    this.stepQ = (this.windowUs - this.stepRem) / policy.requests;
    this.end = slotEnd(reservation.start, reservation.granted, this.windowUs);
  }

  /** True when the lease was taken under this policy (a reload may bring another). */
  holds(policy: QuotaPolicy): boolean {
    return policy.requests === this.policy.requests && policy.windowMs === this.policy.windowMs;
  }

  /** True once half of the lease's slots or of its span has gone: time to take the next one. */
  wearing(localMs: number): boolean {
    return 2 * this.spent >= this.reservation.granted || 2 * (localMs - this.sentMs) >= this.spanMs;
  }

  /** Spends the next slot still ahead of the store's clock at `localMs`; undefined when none is. */
  take(localMs: number): QuotaDecision | undefined {
    const { granted, nowUs, start } = this.reservation;
    const elapsedMs = localMs - this.sentMs;
    // An upper bound of the store's clock now (see the module comment).
    const at = nowUs + Math.ceil(elapsedMs * 1000);
    if (this.spent < this.prepaid && this.spent < granted) return this.decision(at);
    if (elapsedMs > LEASE_MAX_MS) return undefined;
    while (this.spent < granted) {
      if (this.endsAfter(this.spent + 1, at)) return this.decision(at);
      // Past its end: skip to about the first slot ending after `at`; the loop checks exactly.
      const behind = Math.floor((this.policy.requests * (at - start.us)) / this.windowUs) - 1;
      this.spent = Math.max(this.spent + 1, Math.min(granted, behind));
    }
    return undefined;
  }

  /**
   * Whether the n-th slot ends after `at` (µs): slotEnd's exact arithmetic, without making a Tat,
   * since every request spent from a lease asks.
   */
  private endsAfter(n: number, at: number): boolean {
    const { us, part, per } = this.reservation.start;
    // n·rem stays below 2^52 (gcra.ts maxGrant), so the sum and the division are exact.
    const carried = part + n * this.stepRem;
    const rem = carried % per;
    const ends = us + n * this.stepQ + (carried - rem) / per;
    return ends > at || (ends === at && rem > 0);
  }

  private decision(at: number): QuotaDecision {
    this.spent++;
    return {
      allowed: true,
      remaining: this.reservation.remaining + this.reservation.granted - this.spent,
      resetMs: Math.max(0, this.end.us - at + this.end.part / this.end.per) / 1000,
      retryMs: 0,
    };
  }
}
