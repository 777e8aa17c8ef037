// Does a recording purge in a large workspace stay exact, and what does the index cost in memory
// and in Redis? Fills one workspace per size with all its list pages of 100 and up to 20,000
// single recordings (entries built as the gateway builds them), in L1's index of holders and in
// Redis through the checked write, then purges one recording, one folder and one tag: each is
// exact, and L1's index reaches what Redis's does. Prints what each reached, the index's memory
// (L1: heap held; Redis: MEMORY USAGE of its sets) and the purge's time inside Redis (INFO
// commandstats). The suite runs 4,000 recordings; PURGE_SCALE_RECORDINGS=4000,12000,100000 gives
// docs/performance.md's figures (needs --expose-gc, which .taprc passes).
import t from 'tap';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { asWorkspaceId, type WorkspaceId } from '../../../src/brands.js';
import type { CacheEntry } from '../../../src/cache/entry/entry.js';
import { EntryFactory } from '../../../src/cache/entry/factory.js';
import { l1Key, listKey, uuidKey, type ResourceKey } from '../../../src/cache/entry/keys.js';
import { L1Holders } from '../../../src/cache/l1/holders.js';
import { RedisL2Store } from '../../../src/cache/l2/redis-store.js';
import { makeSettings } from '../../../src/cache/settings.js';
import { configWith } from '../../../src/config/load.js';
import { GatewayMetrics } from '../../../src/observability/metrics.js';
import { RedisPurgeStore } from '../../../src/purge/redis-store.js';
import type { Selector } from '../../../src/cache/entry/surrogates.js';
import { workspaceHead } from '../../../src/redis/key-layout.js';
import { SharedRedis } from '../../../src/redis/shared-redis.js';
import { generateWorkspaceData } from '../../../src/sim/data.js';
import { startPrivateRedis } from '../../helpers/redis.js';

const PAGE = 100;
const SINGLES = 20_000;
const sizes = (process.env['PURGE_SCALE_RECORDINGS'] ?? '4000').split(',').map(Number);

async function held(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage().heapUsed;
}

void t.test('recording, folder and tag purges stay exact as the workspace grows', async (t) => {
  const { url } = await startPrivateRedis(t);
  const raw = new Redis(url);
  const metrics = new GatewayMetrics({ defaultMetrics: false });
  const logger = pino({ level: 'silent' });
  const config = configWith({
    cache: { redis: { url, keyPrefix: 'bench', commandTimeout: '5s' } },
  });
  const redis = new SharedRedis(config.cache.redis, { metrics, logger });
  const purges = new RedisPurgeStore(redis, { metrics, logger });
  const l2 = new RedisL2Store(redis, { onForeignGeneration: () => undefined });
  const settings = makeSettings(
    configWith({ cache: { ttl: { list: '1h', recording: '1h' } } }),
    () => null,
  );
  const factory = new EntryFactory(() => settings, metrics);
  while (!redis.up) await new Promise((resolve) => setTimeout(resolve, 50));

  async function redisUsec(): Promise<number> {
    const info = await raw.info('commandstats');
    let usec = 0;
    for (const match of info.matchAll(/^cmdstat_eval(?:sha)?:calls=\d+,usec=(\d+)/gm))
      usec += Number(match[1]);
    return usec;
  }

  async function indexBytes(ws: WorkspaceId): Promise<{ keys: number; bytes: number }> {
    let keys = 0;
    let bytes = 0;
    const stream = raw.scanStream({ match: `${workspaceHead('bench', ws)}:ix:*`, count: 1000 });
    for await (const batch of stream as AsyncIterable<string[]>)
      for (const key of batch) {
        keys++;
        bytes += Number(await raw.memory('USAGE', key, 'SAMPLES', 0));
      }
    return { keys, bytes };
  }

  const rows: string[] = [];
  for (const size of sizes) {
    const ws = asWorkspaceId(`w${size}`)!;
    const generation = (await purges.loadGeneration(ws))!;
    const recordings = generateWorkspaceData(String(ws), { count: size, seed: 7 });
    const now = Date.now();
    const entries: Array<[ResourceKey, CacheEntry]> = [];
    for (let first = 0; first < size; first += PAGE) {
      const page = {
        recordings: recordings.slice(first, first + PAGE).map((r) => structuredClone(r)),
        pagination: { total_records: size, page_size: PAGE, current_page_number: first / PAGE + 1 },
      };
      entries.push([listKey(first / PAGE + 1, PAGE), factory.list(ws, page, now).list]);
    }
    for (const recording of recordings.slice(0, SINGLES))
      entries.push([uuidKey(recording.id), factory.recording(ws, structuredClone(recording), now)]);
    // Redis: one checked write per page, singles by hundreds (as a page's recordings are stored).
    for (let i = 0; i < entries.length; i += PAGE)
      await l2.set(ws, generation, entries.slice(i, i + PAGE));
    // L1's index alone: its heap, without the bodies.
    const before = await held();
    const holders = new L1Holders();
    for (const [key, entry] of entries) holders.add(l1Key(ws, generation, key), entry);
    const l1Bytes = (await held()) - before;
    const redisIndex = await indexBytes(ws);

    const middle = recordings.slice(Math.floor(size / 2));
    const target = middle.find((r) => r.folder_id !== null && r.tags.length > 0) ?? middle[0]!;
    const purge = async (selector: Selector, keys: ResourceKey[]) => {
      const l1 = holders.select(String(ws), [selector], 20_000, () => true);
      const usec = await redisUsec();
      const result = await purges.purgeExact(ws, {
        selectors: [selector],
        keys,
        soft: false,
        now: Date.now(),
        fallback: keys.length > 0 ? 'list' : 'all',
        maxEntries: 20_000,
      });
      const took = (await redisUsec()) - usec;
      t.equal(result.widened, undefined, `${size}: ${selector} purged exactly`);
      t.equal(l1?.size, result.matched ?? -1, `${size}: ${selector}: L1 reaches what Redis does`);
      return `${result.widened ?? `exact: ${result.matched} (L1 ${l1?.size ?? 'past the bound'})`}, ${took} µs in Redis`;
    };
    await purge('r:none', []);
    const recording = await purge(`r:${target.id}`, [uuidKey(target.id)]);
    const folder = target.folder_id ? await purge(`f:${target.folder_id}`, []) : 'no folder';
    const tag = target.tags[0] ? await purge(`t:${target.tags[0].id}`, []) : 'no tag';
    rows.push(
      `| ${size.toLocaleString('en')} | ${entries.length.toLocaleString('en')} | ${(l1Bytes / 2 ** 20).toFixed(1)} MiB | ${redisIndex.keys.toLocaleString('en')} sets, ${(redisIndex.bytes / 2 ** 20).toFixed(1)} MiB | ${recording} | ${folder} | ${tag} |`,
    );
    await raw.flushall();
    await purges.loadGeneration(asWorkspaceId('x')!);
  }
  t.comment(
    `| recordings | entries cached | L1 index | Redis index | recording purge | folder purge | tag purge |\n|---|---|---|---|---|---|---|\n${rows.join('\n')}`,
  );
  await redis.close();
  raw.disconnect();
});
