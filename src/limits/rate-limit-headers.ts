/**
 * The IETF RateLimit-Policy and RateLimit fields (draft-ietf-httpapi-ratelimit-headers): each a
 * Structured Field list (RFC 9651) of one item, the policy's name as an sf-string with integer
 * parameters: `"default";q=100;w=60` (quota, window seconds) and `"default";r=42;t=17` (requests
 * left, seconds until the quota is whole again).
 */
import type { QuotaDecision, QuotaPolicy } from './gcra.js';

/** The two field values of one answer, written with the answer's own header list (respond.ts). */
export interface RateLimitFields {
  readonly policy: string;
  readonly state: string;
}

/**
 * Makes the fields of each answer. They go into the header list handed to writeHead rather than
 * through setHeader: one header set before writeHead makes node merge every other one through
 * setHeader too, which cost more than counting the request. A policy's field is made once.
 */
export class RateLimitFieldMemo {
  /** Policies are resolved once per config (quotas.ts), so a reload's old ones are collected. */
  readonly #policies = new WeakMap<QuotaPolicy, string>();

  /** The fields reporting `decision` under `policy`. */
  of(policy: QuotaPolicy, decision: QuotaDecision): RateLimitFields {
    let field = this.#policies.get(policy);
    if (field === undefined) {
      field = `"${policy.name}";q=${policy.requests};w=${Math.max(1, Math.round(policy.windowMs / 1000))}`;
      this.#policies.set(policy, field);
    }
    const left = Math.max(0, decision.remaining);
    const reset = Math.max(0, Math.ceil(decision.resetMs / 1000));
    return { policy: field, state: `"${policy.name}";r=${left};t=${reset}` };
  }
}
