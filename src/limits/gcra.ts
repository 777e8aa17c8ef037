/**
 * The generic cell rate algorithm (GCRA) behind per-key quotas: `requests` per `window` means one
 * request every window/requests ms (the emission interval), with a burst of up to `requests` at
 * once. Its whole state is one instant per key, the theoretical arrival time (TAT), so Redis
 * keeps it in one string and one script decides and updates it atomically (gcra-script.ts).
 * This module is the same rule in memory, for an instance whose Redis cannot answer.
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

/**
 * Decides one request against a key's TAT (ms; 0 when unseen) at `now`; returns the decision and
 * the TAT to keep (unchanged when denied: a refused request costs nothing, so a client that
 * waits its Retry-After is let through).
 */
export function gcra(
  tat: number,
  now: number,
  policy: QuotaPolicy,
): { decision: QuotaDecision; tat: number } {
  const interval = policy.windowMs / policy.requests;
  const start = Math.max(tat, now);
  const next = start + interval;
  const allowAt = next - policy.windowMs;
  if (allowAt > now) {
    return {
      decision: { allowed: false, remaining: 0, resetMs: start - now, retryMs: allowAt - now },
      tat,
    };
  }
  return {
    decision: {
      allowed: true,
      remaining: Math.floor((policy.windowMs - (next - now)) / interval),
      resetMs: next - now,
      retryMs: 0,
    },
    tat: next,
  };
}
