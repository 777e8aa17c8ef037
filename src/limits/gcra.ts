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
 * Decides one request against a key's TAT at `nowMs`; returns the decision and the TAT to keep
 * (unchanged when denied: a refused request costs nothing, so a client that waits its
 * Retry-After is let through).
 */
export function gcra(
  tat: Tat,
  nowMs: number,
  policy: QuotaPolicy,
): { decision: QuotaDecision; tat: Tat } {
  const per = policy.requests;
  const windowUs = Math.round(policy.windowMs * 1000);
  const step = divide(windowUs, per);
  const now = Math.floor(nowMs * 1000);
  let { us, part } = tat;
  // A TAT counted under another quota (a reload): its fraction in the new denominator, rounded
  // up, the strict side.
  if (tat.per !== per) {
    part = Math.min(per, Math.ceil((part * per) / tat.per));
    if (part === per) [us, part] = [us + 1, 0];
  }
  // start = max(TAT, now)
  if (us < now || (us === now && part === 0)) [us, part] = [now, 0];
  let nextUs = us + step.q;
  let nextPart = part + step.rem;
  if (nextPart >= per) [nextUs, nextPart] = [nextUs + 1, nextPart - per];
  // Allowed when next - window <= now.
  const allowAtUs = nextUs - windowUs;
  if (allowAtUs > now || (allowAtUs === now && nextPart > 0)) {
    return {
      decision: {
        allowed: false,
        remaining: 0,
        resetMs: (us - now + part / per) / 1000,
        retryMs: (allowAtUs - now + nextPart / per) / 1000,
      },
      tat,
    };
  }
  // Whole intervals left in (next - now, window]: floor(per * (window - (next - now)) / window).
  const left = divide(per * (windowUs - (nextUs - now)) - nextPart, windowUs).q;
  return {
    decision: {
      allowed: true,
      remaining: Math.max(0, left),
      resetMs: (nextUs - now + nextPart / per) / 1000,
      retryMs: 0,
    },
    tat: { us: nextUs, part: nextPart, per },
  };
}
