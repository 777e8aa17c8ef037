// Exact bursts in memory: a burst of exactly `requests` passes and the next is refused, for any
// window/requests ratio, including those whose emission interval is not a whole number of ms.
import t from 'tap';
import fc from 'fast-check';
import type { QuotaPolicy } from '../../../src/limits/gcra.js';
import { LocalQuotas } from '../../../src/limits/local-quotas.js';
import { assertHeld } from '../../helpers/fc-replay.js';

/** The decisions of `count` requests of one fresh key, all at `now`. */
function burst(policy: QuotaPolicy, now: number, count: number): boolean[] {
  const local = new LocalQuotas(4);
  return Array.from({ length: count }, () => local.take('k', now, policy).allowed);
}

for (const [requests, windowS] of [
  [7, 60],
  [3, 1],
  [5, 10],
] as const) {
  void t.test(
    `${requests} per ${windowS} s: a burst of ${requests} passes, the next is refused`,
    (t) => {
      const policy: QuotaPolicy = { name: 'default', requests, windowMs: windowS * 1000 };
      for (const now of [1_764_000_000_000, 1_764_000_000_123, 1_000]) {
        const decisions = burst(policy, now, requests + 1);
        t.same(decisions, [...Array<boolean>(requests).fill(true), false], `at ${now}`);
      }
      t.end();
    },
  );
}

void t.test('any ratio: a burst of exactly the quota passes and the next is refused', (t) => {
  const ratio = fc.record({
    requests: fc.integer({ min: 1, max: 2_000 }),
    windowMs: fc.integer({ min: 1_000, max: 86_400_000 }),
    now: fc.integer({ min: 1_000_000_000_000, max: 4_000_000_000_000 }),
  });
  const outcome = fc.check(
    fc.property(ratio, ({ requests, windowMs, now }) => {
      const policy: QuotaPolicy = { name: 'default', requests, windowMs };
      const local = new LocalQuotas(4);
      const remaining: number[] = [];
      for (let i = 0; i < requests; i++) {
        const decision = local.take('k', now, policy);
        if (!decision.allowed) return false;
        remaining.push(decision.remaining);
      }
      // Requests left count down to zero, one per request.
      if (remaining.some((left, i) => left !== requests - 1 - i)) return false;
      const refused = local.take('k', now, policy);
      if (refused.allowed || !(refused.retryMs > 0)) return false;
      // Once its Retry-After (rounded up to the clock's ms) has passed, one more is let through.
      return local.take('k', now + Math.ceil(refused.retryMs), policy).allowed;
    }),
    { numRuns: 500 },
  );
  assertHeld(t, outcome);
  t.end();
});
