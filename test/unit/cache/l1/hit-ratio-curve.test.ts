// The hit-ratio curve of an LRU L1 (miniature simulation) against byte-bounded LRUs of each size
// replaying the same seeded trace: counts only, no clock.
import t from 'tap';
import { CURVE_SIZES, HitRatioCurve } from '../../../../src/cache/l1/hit-ratio-curve.js';
import type { WorkspaceId } from '../../../../src/brands.js';
import { l1Key, linkKey, uuidKey } from '../../../../src/cache/entry/keys.js';
import { L1Cache } from '../../../../src/cache/l1/l1.js';
import { HASH_SPACE, hashOf } from '../../../../src/cache/sampled-keys.js';
import { GatewayMetrics } from '../../../../src/observability/metrics.js';
import { makeEntry, metricValue } from '../../../helpers/redis-tier.js';
import { seeded } from '../../../fixtures/traces.js';

/** Key ids drawn by Zipf(s) over n keys (inverse CDF by binary search). */
function zipfTrace(n: number, s: number, length: number, seed: number): number[] {
  const cdf = new Float64Array(n);
  let total = 0;
  for (let k = 0; k < n; k++) cdf[k] = total += 1 / (k + 1) ** s;
  const random = seeded(seed);
  return Array.from({ length }, () => {
    const u = random() * total;
    let [lo, hi] = [0, n - 1];
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  });
}

/** A byte-bounded LRU (a Map in recency order): hits of a trace whose misses store the key. */
function lruHits(trace: number[], sizeOf: (id: number) => number, maxBytes: number): number {
  const held = new Map<number, number>();
  let bytes = 0;
  let hits = 0;
  for (const id of trace) {
    const size = held.get(id);
    if (size !== undefined) {
      hits++;
      held.delete(id);
      held.set(id, size);
      continue;
    }
    const cost = sizeOf(id);
    for (const [old, oldSize] of held) {
      if (bytes + cost <= maxBytes) break;
      held.delete(old);
      bytes -= oldSize;
    }
    held.set(id, cost);
    bytes += cost;
  }
  return hits;
}

const nameOf = (id: number) => `acme\n1\nr:${id.toString(16).padStart(12, '0')}`;

void t.test(
  'on a seeded Zipf trace the estimate is LRU at each size: exact whole, within 3 points sampled',
  (t) => {
    for (const [s, seed] of [
      [1, 11],
      [0.8, 12],
    ] as const) {
      const trace = zipfTrace(20_000, s, 60_000, seed);
      const sizeOf = (id: number) => 1500 + (id % 7) * 150;
      // Every key simulated (a bound under the 512 KiB simulated), then a sample of them.
      for (const maxBytes of [200 * 1900, 1000 * 1900]) {
        const curve = new HitRatioCurve(maxBytes, 'lru', null, () => 0);
        for (const id of trace) {
          curve.lookup(nameOf(id));
          curve.stored(nameOf(id), sizeOf(id));
        }
        CURVE_SIZES.forEach(({ label, times }, i) => {
          const measured = lruHits(trace, sizeOf, times * maxBytes) / trace.length;
          const estimate = curve.ratios![i]!;
          const what = `Zipf ${s}, ${label}, rate ${curve.rate.toFixed(3)}: estimate ${(100 * estimate).toFixed(1)}% vs LRU ${(100 * measured).toFixed(1)}%`;
          if (curve.rate === 1) t.ok(Math.abs(estimate - measured) < 1e-9, `exact: ${what}`);
          else t.ok(Math.abs(estimate - measured) <= 0.03, `within 3 points: ${what}`);
        });
      }
    }
    t.end();
  },
);

void t.test('nothing sampled yet: no estimate', (t) => {
  const curve = new HitRatioCurve(1000, 'lru', null, () => 0, { simulated: 0 });
  curve.lookup('a');
  t.equal(curve.ratios, null);
  t.end();
});

void t.test('a key hits at the sizes its reuse distance fits, and misses once deleted', (t) => {
  const curve = new HitRatioCurve(10_000, 'lru', null, () => 0);
  curve.stored('k', 1000);
  // 9,500 bytes used since: fits 2x and 4x (20,000, 40,000), not 1x or ½x.
  for (let i = 0; i < 19; i++) curve.stored(`other${i}`, 500);
  curve.lookup('k');
  t.same(curve.ratios, [0, 0, 1, 1]);
  curve.deleted('k');
  curve.deleted('never-seen');
  curve.lookup('k');
  t.same(curve.ratios, [0, 0, 0.5, 0.5], 'looked up after the purge: a miss everywhere');
  t.end();
});

void t.test('a value larger than a size is refused there, as the L1 refuses it', (t) => {
  const curve = new HitRatioCurve(4000, 'lru', null, () => 0);
  curve.lookup('x');
  curve.stored('x', 1000);
  curve.lookup('e');
  curve.stored('e', 1000);
  // 3,000 bytes: more than ½x holds (2,000), so x and e stay there; 1x (4,000) lets x go.
  curve.stored('a', 3000);
  curve.lookup('x');
  t.same(curve.ratios, [1 / 3, 0, 1 / 3, 1 / 3]);
  t.end();
});

void t.test(
  'a lookup by link code of an entry L1 no longer holds is a use of that entry: a hit where a larger L1 would still hold it',
  (t) => {
    const metrics = new GatewayMetrics({ defaultMetrics: false });
    // Room for about five entries of 2,500 bytes (a 1,000-byte body and what L1 counts around
    // it: names, the purge index, surrogates): eight others push the first out of L1, but 2x
    // (about ten) and 4x would still hold it.
    const l1 = new L1Cache(12_000, metrics, 'lru');
    const gen = { all: 1, list: 1 };
    const ws = 'acme' as WorkspaceId;
    const store = (i: number) => {
      const uuid = `0b0f3f8e-6c1a-4a62-9a55-${i.toString(16).padStart(12, '0')}`;
      const code = `code${i.toString().padStart(5, '0')}`;
      const own = l1Key(ws, gen, uuidKey(uuid));
      l1.get(own);
      l1.set(own, makeEntry({ body: Buffer.alloc(1000, 'x'), recordingId: uuid, linkId: code }));
      return { own, link: l1Key(ws, gen, linkKey(code)) };
    };
    const first = store(0);
    for (let i = 1; i <= 8; i++) store(i);
    t.equal(l1.peek(first.own), undefined, 'the first entry left L1');
    t.equal(l1.get(first.link), undefined, 'so its link code misses');
    const [half, one, two, four] = l1.curve.ratios!;
    t.same([half, one], [0, 0], 'nothing hit at ½x and 1x');
    t.equal(two, 1 / 10, 'at 2x the lookup by link code found the entry: 1 hit of 10 lookups');
    t.equal(four, 1 / 10, 'and at 4x');
    t.end();
  },
);

void t.test('a stored value is sized only when its name is sampled', (t) => {
  const sized: string[] = [];
  // A bound 64 times the curve's simulated 512 KiB samples about one name in 64.
  const curve = new HitRatioCurve(64 * 512 * 1024, 'lru', null, (_value, name) => {
    sized.push(name);
    return 100;
  });
  const names = Array.from({ length: 2_000 }, (_, i) => `name-${i}`);
  const entry = makeEntry({ body: Buffer.alloc(10, 'x'), gzip: null, br: null });
  for (const name of names) curve.storedValue(name, entry);
  const sampled = names.filter((name) => hashOf(name) < curve.rate * HASH_SPACE);
  t.ok(
    sampled.length > 0 && sampled.length < names.length / 8,
    `${sampled.length} of 2000 sampled`,
  );
  t.same(sized, sampled, 'the sampled names were sized, and no other');
  t.end();
});

void t.test('past counts weigh half after the half-life', (t) => {
  const ratiosAfter = (halfLife: number): number[] => {
    const curve = new HitRatioCurve(10_000, 'lru', null, () => 0, { halfLife });
    curve.lookup('never-stored'); // a miss at every size, first
    curve.stored('k', 100);
    for (let i = 0; i < 5; i++) curve.lookup('k'); // then five hits
    return curve.ratios!;
  };
  t.same(ratiosAfter(1_000), Array(4).fill(5 / 6), 'without a halving: 5 hits of 6 lookups');
  // Halved twice (at the 4th and 6th lookup), the early miss weighs less than the hits after it.
  for (const ratio of ratiosAfter(4)) t.ok(ratio > 5 / 6 + 0.01 && ratio <= 1, `${ratio} > 5/6`);
  t.end();
});

void t.test('the L1 reports its curve on /metrics', async (t) => {
  const metrics = new GatewayMetrics({ defaultMetrics: false });
  const l1 = new L1Cache(64 * 1024, metrics);
  const entry = makeEntry({ body: Buffer.alloc(1000, 'x'), gzip: null, br: null });
  t.equal(l1.get('k'), undefined);
  l1.set('k', entry);
  t.equal(l1.get('k'), entry);
  l1.delete('k');
  await metrics.scrape();
  for (const { label } of CURVE_SIZES)
    t.equal(await metricValue(metrics, 'recgw_cache_l1_estimated_hit_ratio', { size: label }), 0.5);
});
