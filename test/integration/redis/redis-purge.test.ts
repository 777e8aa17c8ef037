// Purges across instances: two tiers on one Redis share generations and hear each other's purges.
import t from 'tap';
import type { WorkspaceId } from '../../../src/brands.js';
import { listKey, recordingKey, type Generation } from '../../../src/cache/keys.js';
import type { PurgeEvent } from '../../../src/cache/shared-tier.js';
import { l2Key, purgeChannel } from '../../../src/cache/redis-keys.js';
import { getRedis, waitFor } from '../../helpers/redis.js';
import { makeEntry, tierFor, untilPurgesHeard } from '../../helpers/redis-tier.js';

const ACME = 'acme' as WorkspaceId;
const UUID = recordingKey('0b0f3f8e-6c1a-4a62-9a55-1b7d5e1f2a3c');
const LINK = recordingKey('abcDEF_12');
const OTHER_REC = recordingKey('11111111-2222-4333-8444-555555555555');

const redis = await getRedis(t);
const a = await tierFor(t, redis);
const b = await tierFor(t, redis);
const seenByA: PurgeEvent[] = [];
const seenByB: PurgeEvent[] = [];
a.tier.onPurge((event) => seenByA.push(event));
b.tier.onPurge((event) => seenByB.push(event));
const raw = await untilPurgesHeard(t, redis.url, redis.keyPrefix, () => seenByA.length > 0 && seenByB.length > 0);
seenByA.length = 0;
seenByB.length = 0;

void t.test('a workspace purge through one instance reaches both, and both load the new generation', async (t) => {
  t.same(await b.tier.loadGeneration(ACME), { all: 0, list: 0 });
  const generation = await a.tier.purge(ACME, []);
  t.same(generation, { all: 1, list: 0 });
  await waitFor(() => seenByA.length === 1 && seenByB.length === 1, 2000, 'the purge announcement');
  t.same(seenByB[0], { workspace: ACME, generation: { all: 1, list: 0 }, keys: [] }, 'the other instance heard it');
  t.same(seenByA[0], seenByB[0], 'the purging instance hears its own purge too');
  t.same(await b.tier.loadGeneration(ACME), generation);
  t.same(await a.tier.loadGeneration(ACME), generation);
});

void t.test('a recording purge deletes its keys under the current generation and moves list', async (t) => {
  seenByA.length = 0;
  seenByB.length = 0;
  const before = (await a.tier.loadGeneration(ACME)) as Generation;
  const page = listKey(1, 30);
  await a.tier.set(ACME, before, [
    [UUID, makeEntry()],
    [LINK, { kind: 'alias', target: UUID, staleUntil: Date.now() + 60_000 }],
    [OTHER_REC, makeEntry()],
    [page, makeEntry()],
  ]);
  const after = await b.tier.purge(ACME, [UUID, LINK]);
  t.same(after, { all: before.all, list: before.list + 1 });
  t.equal(await a.tier.get(ACME, before, UUID), undefined, 'the recording is gone');
  t.equal(await a.tier.get(ACME, before, LINK), undefined, 'its link-code alias is gone');
  t.ok(await a.tier.get(ACME, after, OTHER_REC), 'other recordings stay (their tag did not move)');
  t.ok(await a.tier.get(ACME, before, page), 'the old page is still stored...');
  t.equal(await a.tier.get(ACME, after, page), undefined, '...but no longer reachable under the new list generation');
  t.not(l2Key(redis.keyPrefix, ACME, before, page), l2Key(redis.keyPrefix, ACME, after, page));
  await waitFor(() => seenByA.length === 1, 2000, 'the announcement');
  t.same(seenByA[0], { workspace: ACME, generation: after, keys: [UUID, LINK] });
});

void t.test('malformed announcements are ignored and logged', async (t) => {
  seenByA.length = 0;
  await raw.publish(purgeChannel(redis.keyPrefix), '{"workspace":"Not A Label","generation":{"all":1,"list":0},"keys":[]}');
  await raw.publish(purgeChannel(redis.keyPrefix), 'not json');
  await waitFor(() => a.logs.filter((line) => line['msg'] === 'ignored a malformed purge announcement').length === 2, 2000, 'two warnings');
  t.equal(seenByA.length, 0);
});

void t.test('a listener that throws does not stop the others', async (t) => {
  const seen: PurgeEvent[] = [];
  a.tier.onPurge(() => {
    throw new Error('listener bug');
  });
  a.tier.onPurge((event) => seen.push(event));
  await a.tier.purge(ACME, []);
  await waitFor(() => seen.length === 1, 2000, 'the later listener');
  t.ok(a.logs.some((line) => line['msg'] === 'purge listener failed'));
});
