// A purge moves the generation and logs it in one step: Redis never holds a moved generation that no instance can learn of.
import t from 'tap';
import type { WorkspaceId } from '../../../src/brands.js';
import { Redis } from 'ioredis';
import { generationKey, purgeLogKey } from '../../../src/redis/key-layout.js';
import { startPrivateRedis, waitFor } from '../../helpers/redis.js';
import { startRedisProxy } from '../../helpers/redis-proxy.js';
import { recordPurges, tierFor, untilRead } from '../../helpers/redis-tier.js';

const ACME = 'acme' as WorkspaceId;
/** A PUBLISH sent as a command of its own (RESP array whose first element is "publish"). */
const STANDALONE_PUBLISH = /\*\d+\r\n\$7\r\npublish\r\n/i;

void t.test(
  'a purge whose wake-up could not be sent as a command of its own still moves and logs together',
  async (t) => {
    const redis = await startPrivateRedis(t);
    // Never forwards a chunk holding a standalone PUBLISH: what a connection lost between two
    // commands looks like to the second one.
    const proxy = await startRedisProxy(t, redis.port, {
      forward: (chunk) => !STANDALONE_PUBLISH.test(chunk.toString('latin1')),
    });
    const { tier } = await tierFor(t, { url: proxy.url, keyPrefix: redis.keyPrefix });
    const heard = recordPurges(tier);
    await untilRead(heard);
    const raw = new Redis(redis.url);
    t.teardown(() => raw.quit());

    // The old way (MULTI, then PUBLISH as a second command) timed out here with Redis already moved.
    const generation = await tier.purge(ACME, 'all', []);
    t.equal(
      await raw.hget(generationKey(redis.keyPrefix, ACME), 'all'),
      String(generation.all),
      'Redis moved',
    );
    const [last] = (await raw.xrevrange(
      purgeLogKey(redis.keyPrefix),
      '+',
      '-',
      'COUNT',
      1,
    )) as Array<[string, string[]]>;
    t.equal(last?.[1][1], 'acme', 'and logged the purge in the same script');
    await waitFor(() => heard.forgotten.includes(ACME), 2000, 'the purge read from the log');
  },
);
