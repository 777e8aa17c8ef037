// The purge subscriber losing its connection and being refused on the way back: retried, and
// nothing left as an unhandled rejection (which would end the process).
import t from 'tap';
import { Redis } from 'ioredis';
import { purgeChannel } from '../../../src/redis/key-layout.js';
import { startPrivateRedis, waitFor } from '../../helpers/redis.js';
import { metricValue, tierFor } from '../../helpers/redis-tier.js';

void t.test(
  'a subscriber refused after a reconnect is retried and leaves no unhandled rejection',
  async (t) => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    t.teardown(() => process.off('unhandledRejection', onUnhandled));

    const redis = await startPrivateRedis(t);
    const { tier, metrics } = await tierFor(t, redis);
    const admin = new Redis(redis.url);
    t.teardown(() => admin.quit());
    const channel = purgeChannel(redis.keyPrefix);
    const subscribers = async (): Promise<number> =>
      ((await admin.call('PUBSUB', 'NUMSUB', channel)) as [string, number])[1];
    await waitFor(async () => (await subscribers()) === 1, 5000, 'the purge subscription');

    // Redis 7 drops a connection subscribed to a channel its user may no longer use, and refuses
    // its SUBSCRIBE once it is back: a reply error instead of an answer, every time until restored.
    await admin.call('ACL', 'SETUSER', 'default', 'resetchannels');
    await waitFor(
      async () =>
        (await metricValue(metrics, 'recgw_redis_errors_total', { op: 'subscribe' })) >= 2,
      5000,
      'refused subscriptions to be counted',
    );
    t.equal(await subscribers(), 0, 'not subscribed while refused');
    await admin.call('ACL', 'SETUSER', 'default', 'allchannels');
    await waitFor(async () => (await subscribers()) === 1, 5000, 'the subscription to be back');
    t.ok(tier.up, 'the command connection was never affected');
    // A moment for any late rejection to surface.
    await new Promise((resolve) => setTimeout(resolve, 100));
    t.same(unhandled.map(String), [], 'no unhandled rejection');
  },
);
