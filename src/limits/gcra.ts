/**
 * The generic cell rate algorithm (GCRA) behind per-key quotas: `requests` per `window` means one
 * request every window/requests (the emission interval), with a burst of up to `requests` at
 * once. Its whole state is one instant per key, the theoretical arrival time (TAT), so Redis
 * keeps it in one string and one script decides and updates it atomically (gcra-script.ts).
 * This module is the same rule in memory, for an instance whose Redis cannot answer.
 *
 * Exact arithmetic: the interval is rarely a whole number of microseconds (60 s / 7), and a TAT
 * kept as a rounded or floating number drifts by a little per request, so the last request of a
 * burst of exactly `requests` could be refused. A TAT is therefore whole microseconds plus a
 * fraction part/requests of one, and every step adds and compares integers (all below 2^53).
 */

/** A quota in force for one request. */
export interface QuotaPolicy {
  /** The RateLimit-Policy name: "default", or "workspace" for a workspaces.<name> override. */
  readonly name: 'default' | 'workspace';
  readonly requests: number;
  readonly windowMs: number;
}

/** One decision, with what the RateLimit headers report. */
export interface QuotaDecision {
  readonly allowed: boolean;
  /** Requests still allowed at once after this one. */
  readonly remaining: number;
  /** Milliseconds until the whole quota is available again. */
  readonly resetMs: number;
  /** Denied only: milliseconds until one more request is allowed (Retry-After). */
  readonly retryMs: number;
}

/** An exact instant: `us` microseconds since the epoch plus `part`/`per` of one (0 <= part < per). */
export interface Tat {
  readonly us: number;
  readonly part: number;
  /** The requests of the policy it was counted under: the fraction's denominator. */
  readonly per: number;
}

/** The TAT of a key never seen (or forgotten): long past, so its whole quota is available. */
export const UNSEEN: Tat = { us: 0, part: 0, per: 1 };

/** a = q·b + rem exactly, for non-negative integers below 2^53 (a plain a / b may round up). */
function divide(a: number, b: number): { q: number; rem: number } {
  const rem = a % b;
  return { q: (a - rem) / b, rem };
}

/**
 * Most slots one reservation may take for a quota whose interval has the fraction `stepRem`
 * (window µs mod requests): granted × stepRem stays below 2^52, so the slot arithmetic is exact.
 */
export function maxGrant(stepRem: number): number {
  return Math.floor(2 ** 52 / Math.max(1, stepRem));
}

/** A reservation of up to `want` consecutive slots of a key's quota, decided at one instant. */
export interface Reservation {
  /**
   * Slots granted: 0 when refused, or for a renewal not far from the limit (retryMs 0 then); at
   * most half of what was left, but one.
   */
  readonly granted: number;
  /** Slots still available at once after the grant. */
  readonly remaining: number;
  /** Milliseconds until the whole quota is available again. */
  readonly resetMs: number;
  /** Refused only: milliseconds until one more slot is available. */
  readonly retryMs: number;
  /** The instant decided at (µs of the clock that decided: Redis' own in the script). */
  readonly nowUs: number;
  /** Where the first granted slot begins: the TAT before the grant, or now if that was past. */
  readonly start: Tat;
}

/** What one reservation asks for. */
export interface Want {
  /** Slots for requests already waiting; 0 to renew a lease, only while far from the limit. */
  readonly demand: number;
  /** Slots more, for requests yet to come (a lease, quota-lease.ts); 0 for none. */
  readonly lease: number;
}

/** A lease is granted only while the key has at least this many times its slots left. */
export const FAR = 4;

/** One request, now. */
export const ONE_REQUEST: Want = { demand: 1, lease: 0 };

/**
 * Reserves slots of a key at `nowUs`: the GCRA step for `granted` requests at once. Returns the
 * reservation and the TAT to keep (unchanged when refused: a refused request costs nothing, so
 * a client that waits its Retry-After is let through). At most half of the slots left are
 * granted (but always one when any is left), so near the limit every request is decided here,
 * one at a time, and far from it another instance still finds as many as this one took; the
 * slots of a lease only while at least FAR times as many are left.
 */
export function reserve(
  tat: Tat,
  nowUs: number,
  policy: QuotaPolicy,
  want: Want = ONE_REQUEST,
): { reservation: Reservation; tat: Tat } {
  const per = policy.requests;
  const windowUs = Math.round(policy.windowMs * 1000);
  const now = Math.floor(nowUs);
  let { us, part } = tat;
  // A TAT counted under another quota (a reload): its fraction in the new denominator, rounded
  // up, the strict side.
  if (tat.per !== per) {
    part = Math.min(per, Math.ceil((part * per) / tat.per));
    if (part === per) [us, part] = [us + 1, 0];
  }
  // start = max(TAT, now)
  if (us < now || (us === now && part === 0)) [us, part] = [now, 0];
  const step = divide(windowUs, per);
  // Slots available: whole intervals in (start, now + window], floor(per·(now + window − start) / window).
  const available = divide(per * (now + windowUs - us) - part, windowUs).q;
  if (available < 1) {
    let allowUs = us + step.q - windowUs;
    let allowPart = part + step.rem;
    if (allowPart >= per) [allowUs, allowPart] = [allowUs + 1, allowPart - per];
    const reservation: Reservation = {
      granted: 0,
      remaining: 0,
      resetMs: (us - now + part / per) / 1000,
      retryMs: (allowUs - now + allowPart / per) / 1000,
      nowUs: now,
      start: { us, part, per },
    };
    return { reservation, tat };
  }
  const wanted =
    want.lease > 0 && available >= FAR * (want.demand + want.lease)
      ? want.demand + want.lease
      : want.demand;
  const start: Tat = { us, part, per };
  if (wanted === 0) {
    // A renewal (no demand) not far from the limit: nothing reserved, nothing refused.
    const reservation: Reservation = {
      granted: 0,
      remaining: available,
      resetMs: 0,
      retryMs: 0,
      nowUs: now,
      start,
    };
    return { reservation, tat };
  }
  const granted = Math.max(1, Math.min(wanted, maxGrant(step.rem), Math.floor(available / 2)));
  const end = slotEnd(start, granted, windowUs);
  const reservation: Reservation = {
    granted,
    remaining: available - granted,
    resetMs: (end.us - now + end.part / per) / 1000,
    retryMs: 0,
    nowUs: now,
    start,
  };
  return { reservation, tat: end };
}

/** start + n intervals (window / start.per each), exactly. */
export function slotEnd(start: Tat, n: number, windowUs: number): Tat {
  const per = start.per;
  const step = divide(windowUs, per);
  const carried = divide(start.part + n * step.rem, per);
  return { us: start.us + n * step.q + carried.q, part: carried.rem, per };
}

/**
 * Decides one request against a key's TAT at `nowMs`; returns the decision and the TAT to keep
 * (unchanged when denied).
 */
export function gcra(
  tat: Tat,
  nowMs: number,
  policy: QuotaPolicy,
): { decision: QuotaDecision; tat: Tat } {
  const { reservation, tat: next } = reserve(tat, nowMs * 1000, policy);
  return { decision: decisionOf(reservation), tat: next };
}

/** The decision for the request a reservation of one slot (or more) was made for. */
export function decisionOf(reservation: Reservation): QuotaDecision {
  return {
    allowed: reservation.granted > 0,
    remaining: reservation.remaining,
    resetMs: reservation.resetMs,
    retryMs: reservation.retryMs,
  };
}
