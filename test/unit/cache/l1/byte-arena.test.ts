// The byte arena under L1: entries keep their identity and bytes while their buffers move into
// segments; memory is never overwritten under a view still in use; half-empty segments are
// emptied without touching recency.
import fc from 'fast-check';
import t from 'tap';
import { ByteArena } from '../../../../src/cache/l1/byte-arena.js';
import { payloadBytes, type CacheEntry } from '../../../../src/cache/entry/entry.js';
import { L1Cache } from '../../../../src/cache/l1/l1.js';
import { GatewayMetrics } from '../../../../src/observability/metrics.js';
import { makeEntry } from '../../../helpers/redis-tier.js';

const SEGMENT = 64 * 1024;
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
const filled = (length: number, seed: number) =>
  Buffer.from(Array.from({ length }, (_, i) => (seed * 31 + i) & 0xff));

function entryOf(seed: number, bodyBytes: number, encoded = true): CacheEntry {
  return makeEntry({
    body: filled(bodyBytes, seed),
    gzip: encoded ? filled(Math.ceil(bodyBytes / 3), seed + 1) : null,
    br: encoded ? filled(Math.ceil(bodyBytes / 4), seed + 2) : null,
  });
}

function copyOf(entry: CacheEntry): { body: Buffer; gzip: Buffer | null; br: Buffer | null } {
  return {
    body: Buffer.from(entry.body),
    gzip: entry.gzip && Buffer.from(entry.gzip),
    br: entry.br && Buffer.from(entry.br),
  };
}

void t.test(
  'an entry stored in L1 is the same object, with the same bytes, now in one segment',
  (t) => {
    const l1 = new L1Cache(4 * 1024 * 1024, new GatewayMetrics({ defaultMetrics: false }));
    const entry = entryOf(1, 1000);
    const before = copyOf(entry);
    const original = entry.body;
    l1.set('k', entry);
    t.equal(
      l1.peek('k'),
      entry,
      'identity kept: callers compare what they stored with what is held',
    );
    t.same(copyOf(entry), before, 'bytes unchanged');
    t.not(entry.body.buffer, original.buffer, 'the body moved');
    t.equal(entry.gzip!.buffer, entry.body.buffer, 'gzip in the same segment');
    t.equal(entry.br!.buffer, entry.body.buffer, 'brotli in the same segment');
    t.equal(
      entry.body.buffer.byteLength,
      256 * 1024,
      'a segment of a sixteenth of the 4 MiB bound',
    );
    t.same(l1.arenaStats, { segments: 1, bytes: 256 * 1024, live: 1000 + 336 + 256 });
    t.end();
  },
);

void t.test('an entry too large to pack keeps its own buffers', (t) => {
  const arena = new ByteArena(() => undefined, SEGMENT);
  const entry = entryOf(2, SEGMENT / 4 + 1, false);
  const body = entry.body;
  arena.hold('big', entry);
  t.equal(entry.body, body);
  t.same(arena.stats, { segments: 0, bytes: 0, live: 0 });
  t.end();
});

void t.test("an entry another L1 holds is left in that L1's arena", (t) => {
  const metrics = new GatewayMetrics({ defaultMetrics: false });
  const [first, second] = [
    new L1Cache(4 * 1024 * 1024, metrics),
    new L1Cache(4 * 1024 * 1024, metrics),
  ];
  const entry = entryOf(4, 1000);
  first.set('k', entry);
  const segment = entry.body.buffer;
  second.set('k', entry);
  t.equal(entry.body.buffer, segment, 'not moved by the second');
  second.delete('k');
  t.equal(first.arenaStats.live, 1000 + 336 + 256, 'still counted by the first');
  t.same(second.arenaStats, { segments: 0, bytes: 0, live: 0 }, 'never counted by the second');
  t.end();
});

void t.test(
  'a view handed out before the entry left L1 keeps its bytes through heavy churn',
  async (t) => {
    const l1 = new L1Cache(1024 * 1024, new GatewayMetrics({ defaultMetrics: false }));
    const first = entryOf(3, 2000);
    l1.set('first', first);
    // As a response still being written would hold it.
    const inFlight = first.body;
    const expected = Buffer.from(inFlight);
    for (let i = 0; i < 3000; i++) l1.set(`k${i}`, entryOf(i + 10, 1500));
    await settle();
    t.equal(l1.peek('first'), undefined, 'first was evicted long ago');
    t.same(inFlight, expected, 'its bytes were never overwritten');
  },
);

/** Keys of the entries whose bytes share a segment, oldest segment first. */
function bySegment(entries: ReadonlyArray<readonly [string, CacheEntry]>): string[][] {
  const groups = new Map<ArrayBufferLike, string[]>();
  for (const [key, entry] of entries)
    groups.set(entry.body.buffer, [...(groups.get(entry.body.buffer) ?? []), key]);
  return [...groups.values()];
}

void t.test(
  'segments beyond the slack are emptied: survivors move and keep their bytes',
  async (t) => {
    const held = new Map<string, CacheEntry>();
    const arena = new ByteArena((key) => held.get(key), SEGMENT);
    const keep = (key: string, entry: CacheEntry) => {
      held.set(key, entry);
      arena.hold(key, entry);
    };
    // 320 entries of ~1.6 KB: eight 64 KiB segments.
    for (let i = 0; i < 320; i++) keep(`k${i}`, entryOf(i, 1000));
    const segments = bySegment([...held]);
    t.equal(arena.stats.segments, 8);
    // One survivor in each of the six oldest segments: none is empty, all are far from full.
    const survivors = segments.slice(0, 6).map((keys) => held.get(keys[1]!)!);
    const before = survivors.map((entry) => ({
      entry,
      bytes: copyOf(entry),
      segment: entry.body.buffer,
    }));
    for (const key of segments.slice(0, 6).flat()) {
      if (survivors.includes(held.get(key)!)) continue;
      arena.release(held.get(key)!);
      held.delete(key);
    }
    t.ok(
      arena.stats.bytes > 1.25 * arena.stats.live + 2 * SEGMENT,
      'over the slack before compaction runs',
    );
    await settle();
    const { bytes, live, segments: inUse } = arena.stats;
    t.ok(
      bytes <= 1.25 * live + 2 * SEGMENT,
      `within the slack after it (${inUse} segments, ${bytes} bytes for ${live} live)`,
    );
    t.ok(inUse < 8, 'emptied segments are no longer in use');
    t.ok(
      before.some(({ entry, segment }) => entry.body.buffer !== segment),
      'survivors moved',
    );
    for (const { entry, bytes: expected } of before)
      t.same(copyOf(entry), expected, 'every survivor keeps its bytes');
    const heldBytes = [...held.values()].reduce((sum, e) => sum + arena.footprintOf(e), 0);
    t.equal(live, heldBytes, 'live bytes are those of the entries held');
  },
);

void t.test('compaction does not refresh recency in L1', async (t) => {
  // 1 MiB bound: 64 KiB segments; 300 entries of ~1.6 KB over eight of them.
  const l1 = new L1Cache(1024 * 1024, new GatewayMetrics({ defaultMetrics: false }));
  const count = 300;
  for (let i = 0; i < count; i++) l1.set(`k${i}`, entryOf(i, 1000));
  const entry = (i: number) => l1.peek(`k${i}`) as CacheEntry | undefined;
  const segments = bySegment([...Array(count).keys()].map((i) => [String(i), entry(i)!]));
  t.ok(segments.length >= 7, `${segments.length} segments`);
  // Keep every eighth entry of the five oldest segments: far beyond the slack, so some are emptied.
  const olderKeys = segments.slice(0, 5).flat().map(Number);
  const survivors = olderKeys.filter((i) => i % 8 === 0);
  const before = new Map(survivors.map((i) => [i, entry(i)!.body.buffer]));
  for (const i of olderKeys) if (i % 8 !== 0) l1.delete(`k${i}`);
  await settle();
  t.ok(
    survivors.some((i) => entry(i)!.body.buffer !== before.get(i)),
    'survivors moved',
  );
  // Newer entries than every survivor: a recency bump on the move would have them evicted first.
  const newer = Math.max(...olderKeys) + 1;
  for (let i = 1000; entry(survivors[0]!) !== undefined; i++) l1.set(`k${i}`, entryOf(i, 1000));
  t.ok(entry(newer), 'the oldest survivor went before entries stored after it');
});

void t.test(
  'property: any sequence of stores, replacements and deletions keeps every held entry intact',
  async (t) => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(
            fc.constantFrom('set', 'set', 'set', 'delete'),
            fc.integer({ min: 0, max: 40 }),
            fc.integer({ min: 1, max: 6000 }),
            fc.boolean(),
          ),
          { minLength: 1, maxLength: 300 },
        ),
        async (ops) => {
          const l1 = new L1Cache(256 * 1024, new GatewayMetrics({ defaultMetrics: false }));
          const expected = new Map<CacheEntry, ReturnType<typeof copyOf>>();
          for (const [op, key, size, encoded] of ops) {
            if (op === 'delete') l1.delete(`k${key}`);
            else {
              const entry = entryOf(key * 7 + size, size, encoded);
              expected.set(entry, copyOf(entry));
              l1.set(`k${key}`, entry);
            }
            if (key % 5 === 0) await settle();
          }
          await settle();
          let live = 0;
          for (let key = 0; key <= 40; key++) {
            const value = l1.peek(`k${key}`);
            if (value === undefined || value.kind !== 'entry') continue;
            if (!Buffer.from(value.body).equals(expected.get(value)!.body)) return false;
            if (value.gzip !== null && !value.gzip.equals(expected.get(value)!.gzip!)) return false;
            if (value.br !== null && !value.br.equals(expected.get(value)!.br!)) return false;
            live += payloadBytes(value);
          }
          const stats = l1.arenaStats;
          // Padding aside, live matches; segments in use stay within the slack stats documents.
          return (
            stats.live >= live &&
            stats.live <= live + 24 * 41 &&
            stats.bytes <= 1.25 * stats.live + 2 * SEGMENT
          );
        },
      ),
      { numRuns: 60 },
    );
    t.pass(
      '60 random sequences: every held entry intact, live bytes exact, segments within the slack',
    );
  },
);
