// Exact bursts through Redis: a burst of exactly `requests` passes and the next is refused, for
// any window/requests ratio. Each burst is one pipeline of scripts run back to back, so all of
// it arrives within far less than one emission interval.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import fc from 'fast-check';
import type { KeyHash, WorkspaceId } from '../../../src/brands.js';
import { ONE_REQUEST, type QuotaPolicy } from '../../../src/limits/gcra.js';
import { Redis } from 'ioredis';
import { quotaKey } from '../../../src/redis/key-layout.js';
import { startPrivateRedis } from '../../helpers/redis.js';
import { tierFor } from '../../helpers/redis-tier.js';
import { assertHeld } from '../../helpers/fc-replay.js';

const ACME = 'acme' as WorkspaceId;

void t.test('bursts of exactly the quota through Redis', async (t) => {
  const redis = await startPrivateRedis(t);
  // A command timeout far above scheduling stalls: a script that timed out would be no decision.
  const { tier } = await tierFor(t, redis, { redis: { commandTimeout: '5s' } });
  /** Each request's decision: allowed with the requests it leaves, or refused (false). */
  const burst = async (
    policy: QuotaPolicy,
    count: number,
  ): Promise<Array<number | false | undefined>> => {
    const key = randomBytes(32).toString('hex') as KeyHash;
    const decisions = await Promise.all(
      Array.from({ length: count }, () => tier.reserve(ACME, key, policy, ONE_REQUEST)),
    );
    return decisions.map(
      (decision) => decision && (decision.granted === 1 ? decision.remaining : false),
    );
  };
  const exactly = (requests: number) => [
    ...Array.from({ length: requests }, (_, i) => requests - 1 - i),
    false,
  ];

  for (const [requests, windowS] of [
    [7, 60],
    [3, 1],
    [5, 10],
  ] as const) {
    const policy: QuotaPolicy = { name: 'default', requests, windowMs: windowS * 1000 };
    for (let trial = 0; trial < 5; trial++)
      t.same(
        await burst(policy, requests + 1),
        exactly(requests),
        `${requests} per ${windowS} s, trial ${trial + 1}`,
      );
  }

  const outcome = await fc.check(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 120 }),
      fc.integer({ min: 10_000, max: 86_400_000 }),
      async (requests, windowMs) => {
        const decisions = await burst({ name: 'default', requests, windowMs }, requests + 1);
        const expected = exactly(requests);
        return decisions.every((decision, i) => decision === expected[i]);
      },
    ),
    { numRuns: 60 },
  );
  assertHeld(t, outcome, 'held over ratios');
});

void t.test('a TAT stored by an earlier version (whole ms) is read as such', async (t) => {
  const redis = await startPrivateRedis(t);
  const raw = new Redis(redis.url);
  t.teardown(() => raw.quit());
  const { tier } = await tierFor(t, redis, { redis: { commandTimeout: '5s' } });
  const policy: QuotaPolicy = { name: 'default', requests: 7, windowMs: 60_000 };
  const [full, idle] = ['c', 'd'].map((c) => c.repeat(64) as KeyHash) as [KeyHash, KeyHash];
  await raw.set(quotaKey(redis.keyPrefix, ACME, full), String(Date.now() + 60_000), 'PX', 60_000);
  await raw.set(quotaKey(redis.keyPrefix, ACME, idle), String(Date.now() - 1_000), 'PX', 60_000);
  t.equal(
    (await tier.reserve(ACME, full, policy, ONE_REQUEST))?.granted,
    0,
    'a whole window ahead: refused',
  );
  t.equal(
    (await tier.reserve(ACME, idle, policy, ONE_REQUEST))?.remaining,
    6,
    'in the past: a whole quota',
  );
  t.match(
    await raw.get(quotaKey(redis.keyPrefix, ACME, idle)),
    /^\d+ \d+ 7$/,
    'written back in the exact format',
  );
});
