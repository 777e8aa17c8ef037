// Purges across instances: two tiers on one Redis share generations and read each other's purges from the log.
import t from 'tap';
import { Redis } from 'ioredis';
import type { WorkspaceId } from '../../../src/brands.js';
import { listKey, recordingKey, type Generation } from '../../../src/cache/entry/keys.js';
import { generationKey, purgeChannel, purgeLogKey } from '../../../src/redis/key-layout.js';
import { l2Key } from '../../../src/cache/l2/keys.js';
import { getRedis, waitFor } from '../../helpers/redis.js';
import { makeEntry, recordPurges, tierFor, untilRead } from '../../helpers/redis-tier.js';

const ACME = 'acme' as WorkspaceId;
const UUID = recordingKey('0b0f3f8e-6c1a-4a62-9a55-1b7d5e1f2a3c');
const LINK = recordingKey('abcDEF_12');
const OTHER_REC = recordingKey('11111111-2222-4333-8444-555555555555');

const redis = await getRedis(t);
const a = await tierFor(t, redis);
const b = await tierFor(t, redis);
const seenByA = recordPurges(a.tier);
const seenByB = recordPurges(b.tier);
await untilRead(seenByA);
await untilRead(seenByB);
const raw = new Redis(redis.url);
t.teardown(() => raw.quit());

void t.test(
  'a workspace purge through one instance is read by both, and both load the new generation',
  async (t) => {
    const before = (await b.tier.loadGeneration(ACME)) as Generation;
    t.same(await a.tier.loadGeneration(ACME), before, 'one generation for both');
    const generation = await a.tier.purge(ACME, 'all', []);
    t.not(generation.all, before.all, 'a new `all` token');
    t.not(generation.list, before.list, 'and a new `list` token');
    await waitFor(
      () => seenByA.forgotten.includes(ACME) && seenByB.forgotten.includes(ACME),
      2000,
      'the log entry',
    );
    t.same(await b.tier.loadGeneration(ACME), generation);
    t.same(await a.tier.loadGeneration(ACME), generation);
  },
);

void t.test(
  'a recording purge deletes its keys under the current generation and moves list',
  async (t) => {
    const before = (await a.tier.loadGeneration(ACME)) as Generation;
    const page = listKey(1, 30);
    await a.tier.set(ACME, before, [
      [UUID, makeEntry()],
      [LINK, { kind: 'alias', target: UUID, staleUntil: Date.now() + 60_000 }],
      [OTHER_REC, makeEntry()],
      [page, makeEntry()],
    ]);
    const after = await b.tier.purge(ACME, 'list', [UUID, LINK]);
    t.equal(after.all, before.all);
    t.not(after.list, before.list);
    t.equal(await a.tier.get(ACME, before, UUID), undefined, 'the recording is gone');
    t.equal(await a.tier.get(ACME, before, LINK), undefined, 'its link-code alias is gone');
    t.ok(
      await a.tier.get(ACME, after, OTHER_REC),
      'other recordings stay (their tag did not move)',
    );
    t.ok(await a.tier.get(ACME, before, page), 'the old page is still stored...');
    t.equal(
      await a.tier.get(ACME, after, page),
      undefined,
      '...but no longer reachable under the new list generation',
    );
    t.not(l2Key(redis.keyPrefix, ACME, before, page), l2Key(redis.keyPrefix, ACME, after, page));
    // A recording fetch begun before the purge, stored after it: Redis refuses it (list moved).
    await a.tier.set(ACME, before, [[UUID, makeEntry()]]);
    t.equal(
      await a.tier.get(ACME, after, UUID),
      undefined,
      'a write begun before the purge is refused',
    );
  },
);

void t.test('each log entry names the one before it', async (t) => {
  await a.tier.purge(ACME, 'all', []);
  await a.tier.purge(ACME, 'all', []);
  const entries = (await raw.xrevrange(
    purgeLogKey(redis.keyPrefix),
    '+',
    '-',
    'COUNT',
    2,
  )) as Array<[string, string[]]>;
  const [newest, previous] = entries;
  t.same(newest?.[1], ['w', 'acme', 'p', previous?.[0]]);
});

void t.test('a foreign message on the wake-up channel forgets nothing', async (t) => {
  // The tests before purged without waiting for A to read its log: count from a read begun after
  // every one of those purges was answered, so none of them lands in this test's count.
  await untilRead(seenByA);
  const forgotten = seenByA.forgotten.length;
  const since = performance.now();
  await raw.publish(purgeChannel(redis.keyPrefix), 'not json');
  await untilRead(seenByA, since);
  t.equal(seenByA.forgotten.length, forgotten);
});

void t.test('a lost generation hash is redrawn, never read as a default', async (t) => {
  const before = (await a.tier.loadGeneration(ACME)) as Generation;
  await a.tier.set(ACME, before, [[OTHER_REC, makeEntry()]]);
  await raw.del(generationKey(redis.keyPrefix, ACME));
  const after = (await b.tier.loadGeneration(ACME)) as Generation;
  t.not(after.all, before.all);
  t.equal(
    await b.tier.get(ACME, after, OTHER_REC),
    undefined,
    'values from before the loss are unreachable',
  );
});

void t.test('a listener that throws does not stop the others', async (t) => {
  const seen: WorkspaceId[] = [];
  a.tier.onPurge({
    forget: () => {
      throw new Error('listener bug');
    },
    forgetAll: () => {},
    synced: () => {},
  });
  a.tier.onPurge({ forget: (ws) => seen.push(ws), forgetAll: () => {}, synced: () => {} });
  await a.tier.purge(ACME, 'all', []);
  await waitFor(() => seen.length === 1, 2000, 'the later listener');
  t.ok(a.logs.some((line) => line['msg'] === 'purge listener failed'));
});
