// One table of test vectors run through the JavaScript and the Lua side by side, on a real Redis:
// - layouts: a value's bytes as the codec writes them (and bytes of other layouts), soft-purged
//   by the exact purge script in Redis (layout.ts#luaLayout) and by the JavaScript rule
//   (entry.ts#softPurged) on the decoded entry, must decode to the same entry, or both be gone
//   (a layout the script cannot read is dropped, which JavaScript reads as a miss);
// - selectors: which selectors reach an entry stored under a key (surrogates.ts#reachedBy)
//   must be exactly those for which Redis's index (index-lua.ts) finds it.
// An offset changed on either side (a number moved in layout.ts's Lua, a field in the codec)
// fails the first table.
import t from 'tap';
import { Redis } from 'ioredis';
import type { WorkspaceId } from '../../../src/brands.js';
import { decodeStored, encodeStored } from '../../../src/cache/entry/codec.js';
import { softPurged, type StoredValue } from '../../../src/cache/entry/entry.js';
import {
  listKey,
  uuidKey,
  type Generation,
  type ResourceKey,
} from '../../../src/cache/entry/keys.js';
import { reachedBy, type Selector } from '../../../src/cache/entry/surrogates.js';
import { l2Key } from '../../../src/cache/l2/keys.js';
import { startPrivateRedis } from '../../helpers/redis.js';
import { makeEntry, tierFor } from '../../helpers/redis-tier.js';

/** The shared 2-core host can stall a command past the stores' test default of 100 ms. */
const GENEROUS = { redis: { commandTimeout: '2s' } };

const NOW = Date.now();
const KEY = uuidKey('0b0f3f8e-6c1a-4a62-9a55-1b7d5e1f2a3c');

/** A layout vector: the bytes stored, and what they are. */
interface LayoutVector {
  readonly name: string;
  readonly bytes: Buffer;
}

function olderLayout(bytes: Buffer, version: number): Buffer {
  const copy = Buffer.from(bytes);
  copy[2] = version;
  return copy;
}

const fresh = makeEntry({ freshUntil: NOW + 60_000, staleUntil: NOW + 600_000 }, NOW);
const LAYOUTS: LayoutVector[] = [
  { name: 'a fresh entry', bytes: encodeStored(fresh) },
  {
    name: 'a fresh entry with both validators and encodings',
    bytes: encodeStored(
      makeEntry(
        {
          validators: { etag: '"v"', lastModified: 'Tue, 21 Nov 2026 12:00:00 GMT' },
          gzip: Buffer.from('gz'),
          br: Buffer.from('br'),
          surrogates: 'r:x f:y t:z',
        },
        NOW,
      ),
    ),
  },
  {
    name: 'an entry with only an ETag validator',
    bytes: encodeStored(makeEntry({ validators: { etag: '"v"' } }, NOW)),
  },
  {
    name: 'an entry already stale',
    bytes: encodeStored(makeEntry({ freshUntil: NOW - 5_000, storedAt: NOW - 65_000 }, NOW)),
  },
  {
    name: 'a remembered 404',
    bytes: encodeStored(makeEntry({ status: 404, recordingId: null, linkId: null }, NOW)),
  },
  { name: 'an alias', bytes: encodeStored({ kind: 'alias', target: KEY, staleUntil: NOW + 1e5 }) },
  {
    name: 'an entry unchanged for a day (adaptive TTL)',
    bytes: encodeStored(makeEntry({ unchangedSince: NOW - 86_400_000 }, NOW)),
  },
  { name: 'layout 3 (before surrogates)', bytes: olderLayout(encodeStored(fresh), 3) },
  { name: 'layout 4 (before unchangedSince)', bytes: olderLayout(encodeStored(fresh), 4) },
  { name: 'layout 6 (a newer writer)', bytes: olderLayout(encodeStored(fresh), 6) },
  { name: 'foreign bytes', bytes: Buffer.from('not a value of ours') },
  { name: 'a truncated entry', bytes: encodeStored(fresh).subarray(0, 40) },
];

/** What JavaScript makes of a value after a soft purge at `now`: the entry it reads, or a miss. */
function jsSoftPurged(bytes: Buffer, now: number): StoredValue | undefined {
  const value = decodeStored(bytes);
  return value?.kind === 'entry' ? softPurged(value, now) : value;
}

void t.test('layouts: a soft purge in Lua and in JavaScript leave the same value', async (t) => {
  const redis = await startPrivateRedis(t);
  const raw = new Redis(redis.url);
  t.teardown(() => raw.quit());
  const { tier } = await tierFor(t, redis, GENEROUS);
  for (const [i, vector] of LAYOUTS.entries()) {
    const ws = `lay${i}` as WorkspaceId;
    const generation: Generation = (await tier.loadGeneration(ws))!;
    const name = l2Key(redis.keyPrefix, ws, generation, KEY);
    await raw.set(name, vector.bytes);
    await tier.purgeExact(ws, {
      selectors: [],
      keys: [KEY],
      soft: true,
      now: NOW,
      fallback: 'list',
      maxEntries: 10,
    });
    const after = await raw.getBuffer(name);
    const lua = after === null ? undefined : decodeStored(after);
    t.same(lua, jsSoftPurged(vector.bytes, NOW), vector.name);
    // A value neither side can read is not left behind by the script either.
    if (decodeStored(vector.bytes) === undefined) t.equal(after, null, `${vector.name}: dropped`);
  }
});

/** A selector vector: an entry stored under `key` with `surrogates`, purged by `selector`. */
const SELECTORS: ReadonlyArray<readonly [ResourceKey, string, Selector]> = [
  [KEY, 'r:a f:b t:c', 'r:a'],
  [KEY, 'r:a f:b t:c', 'f:b'],
  [KEY, 'r:a f:b t:c', 't:c'],
  [KEY, 'r:a f:b t:c', 'r:b'],
  [KEY, 'r:a f:b t:c', 'f:a'],
  [KEY, 'r:a f:b t:c', '*'],
  [KEY, 'r:a f:b t:c', 'l'],
  [KEY, '', '*'],
  [KEY, '', 'l'],
  [KEY, '', 'r:a'],
  [listKey(1, 5), 'r:a r:b f:b', 'l'],
  [listKey(1, 5), 'r:a r:b f:b', 'r:b'],
  [listKey(1, 5), 'r:a r:b f:b', '*'],
  [listKey(1, 5), 'r:a r:b f:b', 't:a'],
  [listKey(1, 5), '', 'l'],
  [listKey(2, 100), 'r:A r:a', 'r:A'],
];

void t.test('selectors: reachedBy and the Redis index agree', async (t) => {
  const redis = await startPrivateRedis(t);
  const { tier } = await tierFor(t, redis, GENEROUS);
  for (const [i, [key, surrogates, selector]] of SELECTORS.entries()) {
    const ws = `sel${i}` as WorkspaceId;
    const generation: Generation = (await tier.loadGeneration(ws))!;
    await tier.set(ws, generation, [[key, makeEntry({ surrogates }, Date.now())]]);
    const purged = await tier.purgeExact(ws, {
      selectors: [selector],
      keys: [],
      soft: true,
      now: Date.now(),
      fallback: 'all',
      maxEntries: 10,
    });
    const js = reachedBy(key, surrogates).includes(selector) ? 1 : 0;
    t.equal(purged.matched, js, `${key} [${surrogates}] by ${selector}: ${js ? 'reached' : 'not'}`);
  }
});
