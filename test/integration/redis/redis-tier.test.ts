// The Redis tier against a real Redis: values, expiry, verdicts and the fetch lock.
import t from 'tap';
import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KeyHash, WorkspaceId } from '../../../src/brands.js';
import { listKey, recordingKey, type Generation } from '../../../src/cache/entry/keys.js';
import { generationKey, verdictKey } from '../../../src/redis/key-layout.js';
import { l2Key, lockKey } from '../../../src/cache/l2/keys.js';
import type { CacheEntry } from '../../../src/cache/entry/entry.js';
import { getRedis } from '../../helpers/redis.js';
import { makeEntry, tierFor } from '../../helpers/redis-tier.js';

const ACME = 'acme' as WorkspaceId;
const OTHER = 'other' as WorkspaceId;
const REC = recordingKey('0b0f3f8e-6c1a-4a62-9a55-1b7d5e1f2a3c');
const HASH = 'a'.repeat(64) as KeyHash;

const redis = await getRedis(t);
const raw = new Redis(redis.url, { lazyConnect: false });
t.teardown(() => raw.quit());
const { tier, metrics } = await tierFor(t, redis);
const GEN: Generation = (await tier.loadGeneration(ACME))!;

void t.test('a stored entry is read back byte for byte under its workspace key only', async (t) => {
  const entry = makeEntry();
  await tier.set(ACME, GEN, [[REC, entry]]);
  const back = (await tier.get(ACME, GEN, REC)) as CacheEntry;
  t.ok(back.body.equals(entry.body));
  t.equal(back.etag, entry.etag);
  t.equal(back.urlDeadline, Infinity);
  t.equal(await tier.get(OTHER, GEN, REC), undefined, 'another workspace does not see it');
  t.equal(
    await tier.get(ACME, { all: 1, list: 0 }, REC),
    undefined,
    'another generation does not see it',
  );
  const key = l2Key(redis.keyPrefix, ACME, GEN, REC);
  t.match(key, `${redis.keyPrefix}:{acme}:`, 'the workspace is the hash tag');
  t.equal(await raw.exists(key), 1);
});

void t.test(
  'values expire at staleUntil, each on its own, and past values are not stored',
  async (t) => {
    const now = Date.now();
    const short = listKey(1, 30);
    const long = listKey(2, 30);
    const past = listKey(3, 30);
    await tier.set(ACME, GEN, [
      [short, makeEntry({ staleUntil: now + 300 }, now)],
      [long, makeEntry({ staleUntil: now + 60_000 }, now)],
      [past, makeEntry({ staleUntil: now - 1 }, now)],
    ]);
    const ttl = await raw.pttl(l2Key(redis.keyPrefix, ACME, GEN, long));
    t.ok(ttl > 55_000 && ttl <= 60_000, `long TTL follows staleUntil (${ttl})`);
    t.equal(
      await raw.exists(l2Key(redis.keyPrefix, ACME, GEN, past)),
      0,
      'an already stale-expired value is skipped',
    );
    t.ok(await tier.get(ACME, GEN, short));
    await sleep(400);
    t.equal(await tier.get(ACME, GEN, short), undefined, 'expired by Redis');
    t.ok(await tier.get(ACME, GEN, long));
  },
);

void t.test(
  'an alias and a staleUntil of Infinity are stored (the latter without expiry)',
  async (t) => {
    const alias = recordingKey('abcDEF_12');
    await tier.set(ACME, GEN, [[alias, { kind: 'alias', target: REC, staleUntil: Infinity }]]);
    t.same(await tier.get(ACME, GEN, alias), { kind: 'alias', target: REC, staleUntil: Infinity });
    t.equal(await raw.pttl(l2Key(redis.keyPrefix, ACME, GEN, alias)), -1);
  },
);

void t.test('bytes the codec did not write read as a miss', async (t) => {
  const key = recordingKey('garbage');
  await raw.set(l2Key(redis.keyPrefix, ACME, GEN, key), 'not an entry');
  t.equal(await tier.get(ACME, GEN, key), undefined);
});

void t.test('verdicts are kept per workspace and expire', async (t) => {
  t.equal(await tier.getVerdict(ACME, HASH), undefined);
  await tier.setVerdict(ACME, HASH, true, 60_000);
  await tier.setVerdict(OTHER, HASH, false, 200);
  t.equal(await tier.getVerdict(ACME, HASH), true);
  t.equal(
    await tier.getVerdict(OTHER, HASH),
    false,
    'the same key hash in another workspace has its own verdict',
  );
  t.equal(await raw.get(verdictKey(redis.keyPrefix, ACME, HASH)), '1');
  await sleep(300);
  t.equal(await tier.getVerdict(OTHER, HASH), undefined, 'the invalid verdict expired');
});

void t.test('the fetch lock: acquired, held, released, and expired', async (t) => {
  const key = listKey(1, 10);
  const first = await tier.tryLock(ACME, GEN, key, 5_000);
  t.equal(first.state, 'acquired');
  t.equal((await tier.tryLock(ACME, GEN, key, 5_000)).state, 'held');
  t.equal(
    (await tier.tryLock(ACME, { all: 0, list: 1 }, key, 5_000)).state,
    'acquired',
    'another generation is another lock',
  );
  if (first.state === 'acquired') await first.release();
  t.equal(await raw.exists(lockKey(redis.keyPrefix, ACME, GEN, key)), 0, 'released');

  const short = await tier.tryLock(ACME, GEN, key, 150);
  t.equal(short.state, 'acquired');
  await sleep(250);
  const next = await tier.tryLock(ACME, GEN, key, 5_000);
  t.equal(next.state, 'acquired', 'an expired lock can be taken again');
  // The first holder releasing late must not free the new holder's lock.
  if (short.state === 'acquired') await short.release();
  t.equal((await tier.tryLock(ACME, GEN, key, 5_000)).state, 'held');
});

void t.test(
  'generations: a missing hash gets fresh random tokens; stored tokens are read back',
  async (t) => {
    t.same(await tier.loadGeneration(ACME), GEN, 'the tokens drawn on first load stay');
    t.ok(GEN.all > 0 && GEN.list > 0 && GEN.all !== GEN.list);
    await raw.hset(generationKey(redis.keyPrefix, OTHER), 'all', '4', 'list', '7');
    t.same(await tier.loadGeneration(OTHER), { all: 4, list: 7 });
    // Evicted (or lost): never read back as a default, always fresh tokens that orphan older values.
    await raw.del(generationKey(redis.keyPrefix, OTHER));
    const fresh = await tier.loadGeneration(OTHER);
    t.ok(fresh !== undefined && fresh.all !== 4 && fresh.list !== 7);
  },
);

void t.test(
  'a write under a generation Redis no longer holds is refused, in the same script',
  async (t) => {
    const key = recordingKey('checked-write');
    const stale = { all: GEN.all + 1, list: GEN.list };
    await tier.set(ACME, stale, [[key, makeEntry()]]);
    t.equal(
      await raw.exists(l2Key(redis.keyPrefix, ACME, stale, key)),
      0,
      'nothing written under tokens Redis does not hold',
    );
    await tier.set(ACME, GEN, [[key, makeEntry()]]);
    t.equal(
      await raw.exists(l2Key(redis.keyPrefix, ACME, GEN, key)),
      1,
      'written under the current ones',
    );
  },
);

void t.test('healthy traffic counts no errors and reports up', async (t) => {
  t.equal(tier.up, true);
  t.equal((await metrics.redisUp.get()).values[0]?.value, 1);
  t.equal((await metrics.redisErrors.get()).values.length, 0);
});
