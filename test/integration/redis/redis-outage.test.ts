// Redis dying, stalling and coming back: calls stay bounded, state is reported, recovery needs no restart.
import t from 'tap';
import { Redis } from 'ioredis';
import { performance } from 'node:perf_hooks';
import type { KeyHash, WorkspaceId } from '../../../src/brands.js';
import { recordingKey } from '../../../src/cache/entry/keys.js';
import { l2Key } from '../../../src/cache/l2/keys.js';
import type { StoresUnderTest } from '../../helpers/redis-tier.js';
import { startPrivateRedis, waitFor } from '../../helpers/redis.js';
import {
  makeEntry,
  metricValue,
  recordPurges,
  tierFor,
  untilRead,
} from '../../helpers/redis-tier.js';

const ACME = 'acme' as WorkspaceId;
const KEY = recordingKey('0b0f3f8e-6c1a-4a62-9a55-1b7d5e1f2a3c');
const HASH = 'b'.repeat(64) as KeyHash;
/**
 * commandTimeout is 100ms in tierFor; timers and scheduling on a loaded 2-core machine get up to
 * this much on top (a stall of a few hundred ms is not rare there). A call left to ioredis's
 * reconnect and offline queue would wait for the reconnect: seconds, or for ever.
 */
const BOUND_MS = 100 + 900;

async function timed<T>(call: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await call();
  return { value, ms: performance.now() - start };
}

/**
 * Whether `call` settles before the event loop's next turn, i.e. without sending a command and
 * waiting for its reply: what "skipped" means, checked without a wall-clock bound.
 */
async function settlesWithoutIo(call: () => Promise<unknown>): Promise<boolean> {
  const nextTurn = new Promise<'next turn'>((resolve) => setImmediate(resolve, 'next turn'));
  return (await Promise.race([call().then(() => 'settled'), nextTurn])) === 'settled';
}

/** Sends probes until the tier's breaker has closed again (one probe goes through per cooldown). */
async function breakerClosed(tier: StoresUnderTest): Promise<void> {
  await waitFor(
    async () => {
      await tier.getVerdict(ACME, HASH);
      return tier.up;
    },
    5000,
    'the breaker to close after Redis answers again',
  );
}

void t.test(
  'Redis killed: calls resolve within the command timeout, state goes down; restarted: it is used again',
  async (t) => {
    const redis = await startPrivateRedis(t);
    const { tier, metrics } = await tierFor(t, redis);
    const GEN = (await tier.loadGeneration(ACME))!;
    await tier.set(ACME, GEN, [[KEY, makeEntry()]]);
    t.ok(await tier.get(ACME, GEN, KEY), 'works before the outage');

    await redis.stop();
    for (let i = 0; i < 5; i++) {
      const get = await timed(() => tier.get(ACME, GEN, KEY));
      t.equal(get.value, undefined, 'get answers a miss');
      t.ok(get.ms < BOUND_MS, `get took ${get.ms.toFixed(1)}ms`);
      const set = await timed(() => tier.set(ACME, GEN, [[KEY, makeEntry()]]));
      t.ok(set.ms < BOUND_MS, `set took ${set.ms.toFixed(1)}ms`);
      const verdict = await timed(() => tier.getVerdict(ACME, HASH));
      t.equal(verdict.value, undefined);
      t.ok(verdict.ms < BOUND_MS, `getVerdict took ${verdict.ms.toFixed(1)}ms`);
    }
    t.equal((await tier.tryLock(ACME, GEN, KEY, 1000)).state, 'unavailable');
    t.equal(await tier.loadGeneration(ACME), undefined);
    await t.rejects(
      tier.purge(ACME, 'all', []),
      { name: 'RedisUnavailableError' },
      'a purge tells the operator it did not happen',
    );
    await waitFor(() => !tier.up, 2000, 'up to turn false');
    t.equal(await metricValue(metrics, 'recgw_redis_up'), 0);
    t.ok(
      (await metricValue(metrics, 'recgw_redis_errors_total', { op: 'get' })) >= 1,
      'get errors counted',
    );

    await redis.start();
    await waitFor(() => tier.up, 5000, 'up again after the restart');
    t.equal(await metricValue(metrics, 'recgw_redis_up'), 1);
    // Restarted without data: the old tokens are gone, and new ones are drawn.
    const fresh = (await tier.loadGeneration(ACME))!;
    t.not(fresh.all, GEN.all);
    await tier.set(ACME, fresh, [[KEY, makeEntry()]]);
    t.ok(await tier.get(ACME, fresh, KEY), 'set/get work on the same tier object');
  },
);

void t.test(
  'Redis stalled: the first calls time out, then the breaker skips Redis at no cost until it answers',
  async (t) => {
    const redis = await startPrivateRedis(t);
    const { tier, metrics, logs } = await tierFor(t, redis);
    const GEN = (await tier.loadGeneration(ACME))!;
    redis.pause();
    t.teardown(() => redis.resume());
    const first = await timed(() => tier.get(ACME, GEN, KEY));
    t.equal(first.value, undefined);
    t.ok(
      first.ms >= 90 && first.ms < BOUND_MS,
      `a stalled command is cut at the timeout (${first.ms.toFixed(1)}ms)`,
    );
    await tier.get(ACME, GEN, KEY);
    await tier.get(ACME, GEN, KEY);
    t.equal(tier.up, false, 'three timeouts in a row open the breaker');
    t.equal(await metricValue(metrics, 'recgw_redis_up'), 0);
    t.ok(
      await settlesWithoutIo(() => tier.get(ACME, GEN, KEY)),
      'while open, a call is answered at once, without a command sent',
    );
    t.equal(
      await metricValue(metrics, 'recgw_redis_errors_total', { op: 'get' }),
      3,
      'skipped calls are not counted as failed commands',
    );
    const failureLines = logs.filter((line) => line['msg'] === 'redis command failed');
    t.equal(failureLines.length, 1, 'failures are logged once per interval, not per call');
    t.ok(
      logs.some(
        (line) =>
          line['msg'] === 'redis breaker open: commands skipped, serving from L1 and upstream',
      ),
    );

    redis.resume();
    // After the cooldown one probe goes through; once it answers the breaker closes.
    await breakerClosed(tier);
    t.equal(await metricValue(metrics, 'recgw_redis_up'), 1);
  },
);

void t.test('a purge made while the subscriber was away is read from the purge log', async (t) => {
  const redis = await startPrivateRedis(t);
  const { tier } = await tierFor(t, redis);
  const other = await tierFor(t, redis);
  const heard = recordPurges(tier);
  await untilRead(heard);
  const raw = new Redis(redis.url);
  t.teardown(() => raw.quit());
  await waitFor(
    async () =>
      Number(await raw.pubsub('NUMSUB', `${redis.keyPrefix}:purge`).then((reply) => reply[1])) ===
      2,
    3000,
    'the subscriptions',
  );

  // Drop the subscribers and purge while they are away: the wake-up is missed, the log entry is not.
  await raw.client('KILL', 'TYPE', 'pubsub');
  await other.tier.purge(ACME, 'all', []);
  await waitFor(() => heard.forgotten.includes(ACME), 5000, 'the purge read from the log');
  t.equal(tier.up, true, 'the command connection was not disturbed');
});

void t.test('writes skipped while Redis stalls are replayed once it answers again', async (t) => {
  const redis = await startPrivateRedis(t);
  const { tier } = await tierFor(t, redis);
  const GEN = (await tier.loadGeneration(ACME))!;
  redis.pause();
  t.teardown(() => redis.resume());
  const keys = [
    recordingKey('backlog-1'),
    recordingKey('backlog-2'),
    recordingKey('backlog-3'),
    recordingKey('backlog-4'),
  ];
  // The first three time out and open the breaker; the fourth is skipped outright.
  for (const key of keys) await tier.set(ACME, GEN, [[key, makeEntry()]]);
  t.equal(tier.up, false, 'breaker open');
  redis.resume();
  await breakerClosed(tier);
  await waitFor(
    async () =>
      (await Promise.all(keys.map((key) => tier.get(ACME, GEN, key)))).every(
        (v) => v !== undefined,
      ),
    3000,
    'the postponed writes to land',
  );
  for (const key of keys)
    t.ok(await tier.get(ACME, GEN, key), `${key} reached Redis after the stall`);
});

void t.test(
  'a postponed write made under a generation Redis has since left is refused on replay',
  async (t) => {
    const redis = await startPrivateRedis(t);
    const { tier } = await tierFor(t, redis);
    const forgotten: WorkspaceId[] = [];
    tier.onPurge({ forget: (ws) => forgotten.push(ws), forgetAll: () => {}, synced: () => {} });
    const raw = new Redis(redis.url);
    t.teardown(() => raw.quit());
    const before = (await tier.loadGeneration(ACME))!;
    // A restart without data: the tokens this instance holds are gone from Redis.
    await redis.stop();
    await waitFor(() => !tier.up, 3000, 'the tier to notice');
    const old = recordingKey('old-generation');
    await tier.set(ACME, before, [[old, makeEntry()]]);
    await redis.start();
    await waitFor(
      () => forgotten.includes(ACME),
      5000,
      'the replay to be refused and the generation forgotten',
    );
    t.equal(
      await raw.exists(l2Key(redis.keyPrefix, ACME, before, old)),
      0,
      'nothing written under the lost tokens',
    );
    // Whatever tokens are drawn next, they are fresh ones: the old answer cannot reappear.
    const fresh = (await tier.loadGeneration(ACME))!;
    t.not(fresh.all, before.all);
    t.equal(await tier.get(ACME, fresh, old), undefined);
  },
);
