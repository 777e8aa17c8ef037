/**
 * The IETF RateLimit-Policy and RateLimit fields (draft-ietf-httpapi-ratelimit-headers): each a
 * Structured Field list (RFC 9651) of one item, the policy's name as an sf-string with integer
 * parameters: `"default";q=100;w=60` (quota, window seconds) and `"default";r=42;t=17` (requests
 * left, seconds until the quota is whole again).
 */
import type { ServerResponse } from 'node:http';
import type { QuotaDecision, QuotaPolicy } from './gcra.js';

/** Sets both fields on a response not yet written; writeHead merges them with its own headers. */
export function setRateLimitHeaders(
  res: ServerResponse,
  policy: QuotaPolicy,
  decision: QuotaDecision,
): void {
  res.setHeader(
    'RateLimit-Policy',
    `"${policy.name}";q=${policy.requests};w=${Math.max(1, Math.round(policy.windowMs / 1000))}`,
  );
  res.setHeader(
    'RateLimit',
    `"${policy.name}";r=${Math.max(0, decision.remaining)};t=${Math.max(0, Math.ceil(decision.resetMs / 1000))}`,
  );
}
