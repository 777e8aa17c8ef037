/**
 * Quotas counted in Redis with leases, two instances (two quota services, each with its own
 * Redis connection) sharing one real Redis and hammering one key concurrently: never more
 * admitted than the GCRA allows over the run, and bursts of exactly the quota pass.
 */
import { randomBytes } from 'node:crypto';
import { setImmediate as yieldToIo } from 'node:timers/promises';
import t from 'tap';
import type { KeyHash, WorkspaceId } from '../../../src/brands.js';
import type { QuotaPolicy } from '../../../src/limits/gcra.js';
import { Quotas } from '../../../src/limits/quotas.js';
import type { GatewayMetrics } from '../../../src/observability/metrics.js';
import { startPrivateRedis, type TestLike } from '../../helpers/redis.js';
import { tierFor } from '../../helpers/redis-tier.js';

const ACME = 'acme' as WorkspaceId;

async function twoInstances(
  t: TestLike,
): Promise<Array<{ quotas: Quotas; metrics: GatewayMetrics }>> {
  const redis = await startPrivateRedis(t);
  return Promise.all(
    [0, 1].map(async () => {
      // A command timeout far above scheduling stalls: a script that timed out would be decided
      // locally, which this test does not measure.
      const { tier, metrics } = await tierFor(t, redis, { redis: { commandTimeout: '5s' } });
      const quotas = new Quotas({
        store: tier,
        clock: { now: () => Date.now() },
        metrics,
        maxLocalKeys: 100,
      });
      return { quotas, metrics };
    }),
  );
}

const freshKey = () => randomBytes(32).toString('hex') as KeyHash;

void t.test(
  'hammering one key from two instances admits no more than the GCRA allows',
  async (t) => {
    const instances = await twoInstances(t);
    // 5,000 per 10 s: one slot every 2 ms, so leases reserve a dozen slots at a time.
    const policy: QuotaPolicy = { name: 'default', requests: 5_000, windowMs: 10_000 };
    const key = freshKey();
    // Until well past the quota; the deadline only for a host too loaded to get there.
    const deadlineMs = 30_000;
    const started = performance.now();
    const admitted: number[] = [];
    let refused = 0;
    let lastAdmitted = started;
    const hammer = async (quotas: Quotas): Promise<void> => {
      while (refused < 2_000 && performance.now() - started < deadlineMs) {
        const decision = await quotas.take(ACME, key, policy);
        if (decision.allowed) {
          lastAdmitted = performance.now();
          admitted.push(lastAdmitted);
        } else refused++;
        // Decisions from a lease come back at once: let Redis' replies in between.
        await yieldToIo();
      }
    };
    await Promise.all(
      instances.flatMap(({ quotas }) => Array.from({ length: 8 }, () => hammer(quotas))),
    );
    // The GCRA's own bound over the run: a burst of the quota, then one per interval, plus one.
    const intervalMs = policy.windowMs / policy.requests;
    const bound = policy.requests + Math.floor((lastAdmitted - started) / intervalMs) + 1;
    t.ok(admitted.length <= bound, `${admitted.length} admitted, at most ${bound} allowed`);
    t.ok(admitted.length >= policy.requests, `the whole quota was reached (${admitted.length})`);
    t.ok(refused >= 2_000, `the rest refused (${refused})`);
    const local = await Promise.all(
      instances.map(async ({ metrics }) =>
        (await metrics.registry.getSingleMetricAsString('recgw_quota_decisions_total')).includes(
          'source="local"',
        ),
      ),
    );
    t.same(local, [false, false], 'every decision was counted against Redis');
  },
);

void t.test(
  'bursts of exactly the quota pass across two instances, the next is refused',
  async (t) => {
    const [a, b] = await twoInstances(t);
    const burst = async (policy: QuotaPolicy): Promise<number> => {
      const key = freshKey();
      const started = performance.now();
      const decisions = await Promise.all(
        Array.from({ length: policy.requests }, (_, i) =>
          (i % 2 === 0 ? a! : b!).quotas.take(ACME, key, policy),
        ),
      );
      const next = await Promise.all([
        a!.quotas.take(ACME, key, policy),
        b!.quotas.take(ACME, key, policy),
      ]);
      // One more slot comes with each interval: on a host that stalled that long, it is due.
      if (performance.now() - started < policy.windowMs / policy.requests)
        t.same(
          next.map((decision) => decision.allowed),
          [false, false],
          'the next request is refused on both',
        );
      return decisions.filter((decision) => decision.allowed).length;
    };
    for (const [requests, windowMs] of [
      [7, 60_000],
      [3, 1_000],
      [20, 10_000],
      [60, 60_000],
    ] as const)
      for (let trial = 0; trial < 3; trial++)
        t.equal(
          await burst({ name: 'default', requests, windowMs }),
          requests,
          `${requests} per ${windowMs / 1000} s`,
        );
  },
);
