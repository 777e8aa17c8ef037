// Redis's index of holders (cache/l2/index-lua.ts) on a real Redis. Invariants:
// - it shrinks back: pairs leave with the values they name (by expiry), and nothing of it
//   outlives the last value it indexed;
// - under maxmemory with allkeys eviction, a purge never leaves a value it reaches readable:
//   either it finds every one, or it widens (`index-lost`);
// - a purge's Redis work follows what it reaches, not the workspace's size: the same commands
//   for one recording in a workspace of 200 recordings and of 5,000 (counted by INFO
//   commandstats, never timed).
import t from 'tap';
import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkspaceId } from '../../../src/brands.js';
import { decodeStored } from '../../../src/cache/entry/codec.js';
import type { StoredValue } from '../../../src/cache/entry/entry.js';
import {
  listKey,
  uuidKey,
  type Generation,
  type ResourceKey,
} from '../../../src/cache/entry/keys.js';
import { reachedBy } from '../../../src/cache/entry/surrogates.js';
import { l2Key } from '../../../src/cache/l2/keys.js';
import { workspaceHead } from '../../../src/redis/key-layout.js';
import { startPrivateRedis } from '../../helpers/redis.js';
import { makeEntry, tierFor, type StoresUnderTest } from '../../helpers/redis-tier.js';

/** The shared 2-core host can stall a command past the stores' test default of 100 ms. */
const GENEROUS = { redis: { commandTimeout: '2s' } };

const PAGE = 100;
const FOLDERS = 7;

function id(i: number): string {
  return `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
}
function folderOf(i: number): string {
  return `fold-${i % FOLDERS}`;
}
function surrogatesOf(i: number): string {
  return `r:${id(i)} f:${folderOf(i)}`;
}

/** Stores `count` recordings and their pages of 100, living `ttlMs`, with bodies of `bodyBytes`. */
async function fill(
  tier: StoresUnderTest,
  ws: WorkspaceId,
  generation: Generation,
  count: number,
  ttlMs: number,
  bodyBytes = 60,
): Promise<void> {
  const now = Date.now();
  const timed = { freshUntil: now + ttlMs, staleUntil: now + ttlMs };
  const body = Buffer.alloc(bodyBytes, 'x');
  for (let first = 0; first < count; first += PAGE) {
    const ids = Array.from({ length: Math.min(PAGE, count - first) }, (_, k) => first + k);
    const page = new Set(ids.flatMap((i) => surrogatesOf(i).split(' ')));
    const values: Array<[ResourceKey, StoredValue]> = [
      [
        listKey(first / PAGE + 1, PAGE),
        makeEntry({ ...timed, body, surrogates: [...page].join(' ') }, now),
      ],
      ...ids.map((i): [ResourceKey, StoredValue] => [
        uuidKey(id(i)),
        makeEntry(
          { ...timed, body, surrogates: surrogatesOf(i), recordingId: id(i), linkId: null },
          now,
        ),
      ]),
    ];
    await tier.set(ws, generation, values);
  }
}

async function indexKeys(raw: Redis, prefix: string, ws: WorkspaceId): Promise<string[]> {
  return raw.keys(`${workspaceHead(prefix, ws)}:ix:*`);
}

void t.test('the index shrinks back as the values it names expire', async (t) => {
  const redis = await startPrivateRedis(t);
  const raw = new Redis(redis.url);
  t.teardown(() => raw.quit());
  const { tier } = await tierFor(t, redis, GENEROUS);
  const ws = 'shrink' as WorkspaceId;
  const generation = (await tier.loadGeneration(ws))!;
  await fill(tier, ws, generation, 300, 600);
  const held = await indexKeys(raw, redis.keyPrefix, ws);
  t.ok(held.length >= 300, `indexed: ${held.length} sets`);
  await sleep(1_200);
  t.same(await indexKeys(raw, redis.keyPrefix, ws), [], 'nothing of it outlives its values');

  // Written again: the sets hold only what is live (trimmed by score as they are written).
  await fill(tier, ws, generation, 200, 300);
  await sleep(600);
  await fill(tier, ws, generation, 1, 60_000);
  const all = `${workspaceHead(redis.keyPrefix, ws)}:ix:${generation.all}:*`;
  t.equal(await raw.zcard(all), 2, 'the set of every entry: the live page and recording');
  t.equal(
    await raw.zcard(`${workspaceHead(redis.keyPrefix, ws)}:ix:${generation.all}:f:${folderOf(0)}`),
    2,
    'its folder: the recording and its page',
  );
  const exact = await tier.purgeExact(ws, {
    selectors: [`f:${folderOf(0)}`],
    keys: [],
    soft: false,
    now: Date.now(),
    fallback: 'all',
    maxEntries: 20_000,
  });
  t.equal(exact.matched, 2, 'a purge after expiries: exact, the live values only');
});

// volatile-lru keeps the generation hash (it has no TTL) and evicts values and index sets alike:
// the index is found incomplete. allkeys-lru may evict the hash too: the workspace moves whole.
for (const policy of ['volatile-lru', 'allkeys-lru'])
  void t.test(
    `under ${policy} eviction a purge never leaves what it reaches readable`,
    async (t) => {
      const redis = await startPrivateRedis(t);
      const raw = new Redis(redis.url);
      t.teardown(() => raw.quit());
      await raw.config('SET', 'maxmemory', String(4 * 1024 * 1024));
      await raw.config('SET', 'maxmemory-policy', policy);
      const { tier } = await tierFor(t, redis, GENEROUS);
      const ws = 'evicted' as WorkspaceId;
      let generation = (await tier.loadGeneration(ws))!;
      await fill(tier, ws, generation, 4_000, 2_500, 1_500);
      const evicted = Number(/evicted_keys:(\d+)/.exec(await raw.info('stats'))?.[1]);
      t.ok(evicted > 0, `Redis evicted ${evicted} keys`);
      const outcomes: string[] = [];
      for (let folder = 0; folder < FOLDERS; folder++) {
        const selector = `f:fold-${folder}` as const;
        const result = await tier.purgeExact(ws, {
          selectors: [selector],
          keys: [],
          soft: false,
          now: Date.now(),
          fallback: 'all',
          maxEntries: 20_000,
        });
        outcomes.push(result.widened ?? `exact(${result.matched})`);
        generation = (await tier.loadGeneration(ws))!;
        const head = workspaceHead(redis.keyPrefix, ws);
        const readable: string[] = [];
        for (const name of await raw.keys(`${head}:*`)) {
          const key = name.slice(name.lastIndexOf(':', name.lastIndexOf(':') - 1) + 1);
          const isValue = key.startsWith('u:') || key.startsWith('l:');
          // l:<page>:<size> holds one more colon than u:<uuid>.
          const resource = (
            name.includes(':l:') ? name.slice(name.indexOf(':l:') + 1) : key
          ) as ResourceKey;
          if (!isValue && !name.includes(':l:')) continue;
          if (name !== l2Key(redis.keyPrefix, ws, generation, resource)) continue;
          const raw2 = await raw.getBuffer(name);
          const value = raw2 === null ? undefined : decodeStored(raw2);
          if (value?.kind === 'entry' && reachedBy(resource, value.surrogates).includes(selector))
            readable.push(resource);
        }
        t.same(
          readable,
          [],
          `after purging ${selector} (${outcomes.at(-1)}): none of it is readable`,
        );
      }
      t.comment(`outcomes: ${outcomes.join(', ')}`);
      await sleep(3_000);
      t.same(await indexKeys(raw, redis.keyPrefix, ws), [], 'the index is gone with its values');
    },
  );

/** Calls per command from INFO commandstats. */
async function commandCalls(raw: Redis): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const match of (await raw.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
    calls.set(match[1]!, Number(match[2]));
  return calls;
}

/** The commands a purge's script can run on values and the index. */
const DATA_COMMANDS = [
  'get',
  'del',
  'setrange',
  'exists',
  'hset',
  'hget',
  'hmget',
  'hlen',
  'hkeys',
  'zadd',
  'zrem',
  'zrange',
  'zscore',
  'zcard',
  'zremrangebyscore',
  'keys',
  'scan',
];

void t.test("a purge's Redis work does not grow with the workspace", async (t) => {
  const redis = await startPrivateRedis(t);
  const raw = new Redis(redis.url);
  t.teardown(() => raw.quit());
  const { tier } = await tierFor(t, redis, GENEROUS);
  const work: Array<Record<string, number>> = [];
  for (const size of [200, 5_000]) {
    const ws = `size${size}` as WorkspaceId;
    const generation = (await tier.loadGeneration(ws))!;
    await fill(tier, ws, generation, size, 600_000);
    const before = await commandCalls(raw);
    const result = await tier.purgeExact(ws, {
      selectors: [`r:${id(150)}`],
      keys: [uuidKey(id(150))],
      soft: false,
      now: Date.now(),
      fallback: 'list',
      maxEntries: 20_000,
    });
    const after = await commandCalls(raw);
    t.equal(result.matched, 2, `${size} recordings: its page and itself`);
    const used: Record<string, number> = {};
    for (const command of DATA_COMMANDS) {
      const n = (after.get(command) ?? 0) - (before.get(command) ?? 0);
      if (n > 0) used[command] = n;
    }
    work.push(used);
  }
  t.comment(`200: ${JSON.stringify(work[0])}; 5000: ${JSON.stringify(work[1])}`);
  t.same(work[1], work[0], 'the same commands at 200 and at 5,000 recordings');
});

void t.test(
  'values indexed by an earlier release widen a purge to the whole workspace',
  async (t) => {
    const redis = await startPrivateRedis(t);
    const raw = new Redis(redis.url);
    t.teardown(() => raw.quit());
    const { tier } = await tierFor(t, redis, GENEROUS);
    const ws = 'rollout' as WorkspaceId;
    const before = (await tier.loadGeneration(ws))!;
    await fill(tier, ws, before, 100, 600_000);
    // An earlier release's checked write indexes a value in the old hash (`<surrogate> <key>`).
    await raw.hset(`${workspaceHead(redis.keyPrefix, ws)}:idx`, `r:${id(3)} u:${id(3)}`, '1');
    const purged = await tier.purgeExact(ws, {
      selectors: [`r:${id(3)}`],
      keys: [uuidKey(id(3))],
      soft: false,
      now: Date.now(),
      fallback: 'list',
      maxEntries: 20_000,
    });
    t.equal(purged.widened, 'older-instances');
    t.not(purged.generation.all, before.all, 'the whole workspace moved, whatever its fallback');
    const again = await tier.purgeExact(ws, {
      selectors: [`r:${id(3)}`],
      keys: [],
      soft: false,
      now: Date.now(),
      fallback: 'list',
      maxEntries: 20_000,
    });
    t.equal(again.widened, undefined, 'and the next purge is exact again (a fresh old index)');
  },
);
