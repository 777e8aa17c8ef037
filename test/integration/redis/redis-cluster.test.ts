// The Redis tier on a real three-master Cluster: one workspace, one slot; checked writes, purge scripts, the purge log and pub/sub work.
import t from 'tap';
import { Cluster } from 'ioredis';
import type { KeyHash, WorkspaceId } from '../../../src/brands.js';
import { listKey, recordingKey, type Generation } from '../../../src/cache/entry/keys.js';
import { generationKey, verdictKey } from '../../../src/redis/key-layout.js';
import { l2Key, lockKey } from '../../../src/cache/l2/keys.js';
import { startRedisCluster } from '../../helpers/redis-cluster.js';
import { waitFor } from '../../helpers/redis.js';
import { makeEntry, recordPurges, tierFor, untilRead } from '../../helpers/redis-tier.js';

const GEN: Generation = { all: 0, list: 0 };
const UUID = recordingKey('0b0f3f8e-6c1a-4a62-9a55-1b7d5e1f2a3c');
const LINK = recordingKey('abcDEF_12');
const PAGE = listKey(1, 30);
const keyPrefix = 'recgw-cluster';

const cluster = await startRedisCluster(t);
const raw = new Cluster(cluster.nodes);
t.teardown(() => raw.quit());
const a = await tierFor(t, { nodes: cluster.nodes, keyPrefix });
const b = await tierFor(t, { nodes: cluster.nodes, keyPrefix });
const heardByB = recordPurges(b.tier);
await untilRead(heardByB, undefined, 10_000);

// Workspaces chosen so their slots land on different masters, proving keys follow the hash tag.
const workspaces = ['acme', 'globex', 'initech', 'umbrella', 'hooli'].map(
  (name) => name as WorkspaceId,
);

void t.test('every key of a workspace hashes to one slot', async (t) => {
  for (const ws of workspaces) {
    const keys = [
      l2Key(keyPrefix, ws, GEN, UUID),
      l2Key(keyPrefix, ws, GEN, PAGE),
      verdictKey(keyPrefix, ws, 'c'.repeat(64) as KeyHash),
      lockKey(keyPrefix, ws, GEN, UUID),
      generationKey(keyPrefix, ws),
    ];
    const slots = await Promise.all(keys.map((key) => raw.cluster('KEYSLOT', key)));
    t.equal(new Set(slots).size, 1, `${ws}: one slot`);
  }
  const slots = await Promise.all(
    workspaces.map((ws) => raw.cluster('KEYSLOT', generationKey(keyPrefix, ws))),
  );
  const masters = new Set(slots.map((slot) => raw.slots[slot]?.[0]));
  t.ok(masters.size > 1, `the test workspaces live on ${masters.size} different masters`);
});

void t.test('checked sets and gets work for workspaces on every master', async (t) => {
  for (const ws of workspaces) {
    const entry = makeEntry({ etag: `"${ws}"` });
    const GEN = (await a.tier.loadGeneration(ws))!;
    await a.tier.set(ws, GEN, [
      [UUID, entry],
      [PAGE, makeEntry()],
    ]);
    const back = await b.tier.get(ws, GEN, UUID);
    t.equal(
      back?.kind === 'entry' ? back.etag : undefined,
      `"${ws}"`,
      `${ws} read back through the other instance`,
    );
  }
  await a.tier.setVerdict(workspaces[0]!, 'd'.repeat(64) as KeyHash, true, 10_000);
  t.equal(await b.tier.getVerdict(workspaces[0]!, 'd'.repeat(64) as KeyHash), true);
  const lock = await a.tier.tryLock(workspaces[1]!, GEN, UUID, 5000);
  t.equal(lock.state, 'acquired');
  t.equal((await b.tier.tryLock(workspaces[1]!, GEN, UUID, 5000)).state, 'held');
  if (lock.state === 'acquired') await lock.release();
  t.equal((await b.tier.tryLock(workspaces[1]!, GEN, UUID, 5000)).state, 'acquired');
  t.equal(a.tier.up, true);
  t.equal((await a.metrics.redisErrors.get()).values.length, 0, 'no command failed');
});

void t.test(
  'purges work on the cluster and are read from the log by the other instance',
  async (t) => {
    const ws = workspaces[2]!;
    const GEN = (await a.tier.loadGeneration(ws))!;
    await a.tier.set(ws, GEN, [
      [UUID, makeEntry()],
      [LINK, { kind: 'alias', target: UUID, staleUntil: Date.now() + 60_000 }],
    ]);
    t.ok(await b.tier.get(ws, GEN, UUID), 'stored');
    const after = await a.tier.purge(ws, 'list', [UUID, LINK]);
    t.equal(after.all, GEN.all);
    t.not(after.list, GEN.list);
    t.equal(await b.tier.get(ws, GEN, UUID), undefined, 'deleted');
    t.equal(await b.tier.get(ws, GEN, LINK), undefined, 'alias deleted');
    const whole = await b.tier.purge(ws, 'all', []);
    t.not(whole.all, GEN.all);
    t.same(await a.tier.loadGeneration(ws), whole);
    await waitFor(
      () => heardByB.forgotten.filter((name) => name === ws).length === 2,
      3000,
      'both log entries',
    );
    t.equal(heardByB.resets, 0, 'the log reached back: nothing lost');

    // An exact purge: its work in the workspace's slot, then its log entry in the log's.
    const now = (await a.tier.loadGeneration(ws))!;
    await a.tier.set(ws, now, [[UUID, makeEntry()]]);
    const soft = await a.tier.purgeExact(ws, {
      selectors: ['*'],
      keys: [],
      soft: true,
      now: Date.now(),
      fallback: 'all',
      maxEntries: 20_000,
    });
    t.equal(soft.matched, 1, 'the indexed entry matched');
    t.equal(soft.generation.all, now.all, 'no token but rev moved');
    t.not(soft.generation.rev ?? 0, now.rev ?? 0);
    const marked = await b.tier.get(ws, soft.generation, UUID);
    t.ok(marked?.kind === 'entry' && marked.freshUntil <= Date.now(), 'kept, marked stale');
    const hard = await b.tier.purgeExact(ws, {
      selectors: [],
      keys: [UUID],
      soft: false,
      now: Date.now(),
      fallback: 'list',
      maxEntries: 20_000,
    });
    t.equal(await a.tier.get(ws, hard.generation, UUID), undefined, 'dropped by name');
    await waitFor(
      () => heardByB.forgotten.filter((name) => name === ws).length === 4,
      3000,
      'the exact purges logged (a listener without exact forgets)',
    );
  },
);

void t.test('scripts of workspaces on different masters run at the same time', async (t) => {
  // Requests of several workspaces at once send their scripts in the same tick; each must reach
  // its own workspace's master, whichever node the script's SHA would hash to.
  // Instances of their own with a generous command timeout: a stall of the loaded test machine
  // must not pass for a refused command.
  const a = await tierFor(
    t,
    { nodes: cluster.nodes, keyPrefix },
    { redis: { commandTimeout: '2s' } },
  );
  const b = await tierFor(
    t,
    { nodes: cluster.nodes, keyPrefix },
    { redis: { commandTimeout: '2s' } },
  );
  const many = Array.from({ length: 12 }, (_, i) => `tenant${i}` as WorkspaceId);
  const errorsBefore = (await a.metrics.redisErrors.get()).values.reduce((n, v) => n + v.value, 0);
  const generations = await Promise.all(many.map((ws) => a.tier.loadGeneration(ws)));
  t.same(
    many.filter((_, i) => generations[i] === undefined),
    [],
    'every generation loaded',
  );
  if (generations.includes(undefined)) return;
  await Promise.all(
    many.map((ws, i) => a.tier.set(ws, generations[i]!, [[UUID, makeEntry({ etag: `"${ws}"` })]])),
  );
  const back = await Promise.all(many.map((ws, i) => b.tier.get(ws, generations[i]!, UUID)));
  t.same(
    many.filter((ws, i) => {
      const value = back[i];
      return value?.kind !== 'entry' || value.etag !== `"${ws}"`;
    }),
    [],
    'every concurrent write landed',
  );
  const errorsAfter = (await a.metrics.redisErrors.get()).values.reduce((n, v) => n + v.value, 0);
  t.equal(errorsAfter - errorsBefore, 0, 'no command failed');
});
