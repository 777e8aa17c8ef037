// The S3-FIFO L1's hit-ratio curve (miniature simulation) against S3-FIFO L1s of each size
// replaying the same seeded trace: whole when every key is simulated, within 3 points when a
// sample is. Counts only, no clock.
import t from 'tap';
import type { WorkspaceId } from '../../../../src/brands.js';
import type { StoredValue } from '../../../../src/cache/entry/entry.js';
import { l1Key, linkKey, uuidKey } from '../../../../src/cache/entry/keys.js';
import { CURVE_SIZES, HitRatioCurve } from '../../../../src/cache/l1/hit-ratio-curve.js';
import { L1Cache } from '../../../../src/cache/l1/l1.js';
import { GatewayMetrics } from '../../../../src/observability/metrics.js';
import { makeEntry } from '../../../helpers/redis-tier.js';
import { gatewayTraces } from '../../../fixtures/traces.js';

const ws = 'acme' as WorkspaceId;
const gen = { all: 1, list: 1 };
const uuidOf = (id: number) => `0b0f3f8e-6c1a-4a62-9a55-${id.toString(16).padStart(12, '0')}`;
const codeOf = (id: number) => `c${id.toString(36).padStart(9, '0')}`;

/** Entries of 600 to 1,500 body bytes, each with a link code, made once per id. */
function entries(): (id: number) => StoredValue {
  const made = new Map<number, StoredValue>();
  return (id) => {
    let entry = made.get(id);
    if (entry === undefined) {
      entry = makeEntry({
        body: Buffer.alloc(600 + (id % 10) * 100, 'x'),
        gzip: null,
        br: null,
        recordingId: uuidOf(id),
        linkId: codeOf(id),
      });
      made.set(id, entry);
    }
    return entry;
  };
}

/** Replays a trace through an S3-FIFO L1 as the gateway asks it (one in ten by link code). */
function replay(ids: Int32Array, maxBytes: number): { l1: L1Cache; hits: number } {
  const l1 = new L1Cache(maxBytes, new GatewayMetrics({ defaultMetrics: false }), 's3-fifo');
  const entryOf = entries();
  let hits = 0;
  ids.forEach((id, i) => {
    const own = l1Key(ws, gen, uuidKey(uuidOf(id)));
    const asked = i % 10 === 0 ? l1Key(ws, gen, linkKey(codeOf(id))) : own;
    if (l1.get(asked) !== undefined) hits++;
    else l1.set(own, entryOf(id));
  });
  return { l1, hits };
}

for (const [scale, maxBytes] of [
  ['every key simulated', 400_000],
  ['a sample simulated', 4_000_000],
] as const)
  void t.test(`${scale}: the estimate at each size against S3-FIFO replayed there`, (t) => {
    for (const trace of gatewayTraces(20_000, 40_000)) {
      const { l1, hits } = replay(trace.ids, maxBytes);
      const curve = l1.curve;
      CURVE_SIZES.forEach(({ label, times }, i) => {
        const measured =
          (times === 1 ? hits : replay(trace.ids, times * maxBytes).hits) / trace.ids.length;
        const estimate = curve.ratios![i]!;
        const what = `${trace.name}, ${label}, rate ${curve.rate.toFixed(3)}: estimate ${(100 * estimate).toFixed(1)}% vs ${(100 * measured).toFixed(1)}%`;
        if (curve.rate === 1) t.ok(Math.abs(estimate - measured) < 1e-9, `exact: ${what}`);
        else t.ok(Math.abs(estimate - measured) <= 0.03, `within 3 points: ${what}`);
      });
    }
    t.end();
  });

void t.test('nothing sampled yet: no estimate; a deleted key misses at every size', (t) => {
  const curve = new HitRatioCurve(10_000, 's3-fifo', null, () => 1000);
  t.equal(curve.ratios, null);
  curve.lookupMissed('k');
  curve.stored('k', 1000);
  curve.lookup('k');
  t.same(curve.ratios, [0.5, 0.5, 0.5, 0.5], 'a miss, then a hit everywhere');
  curve.deleted('k');
  curve.lookupMissed('k');
  t.same(curve.ratios, [1 / 3, 1 / 3, 1 / 3, 1 / 3], 'looked up after the purge: a miss');
  t.end();
});

void t.test(
  'a key the L1 still holds but no size does is taken in again at the bytes the L1 has for it',
  (t) => {
    // 4x holds ten 1,000-byte items; twelve others pass through every size after a.
    const curve = new HitRatioCurve(2500, 's3-fifo', null, () => 1000);
    const held = makeEntry({ body: Buffer.alloc(10) });
    for (const key of ['a', ...Array.from({ length: 12 }, (_, i) => `other${i}`)]) {
      curve.lookupMissed(key);
      curve.stored(key, 1000);
    }
    // The L1 found a (a sample's L1 and its miniatures need not agree): every size missed it,
    // and, with no store from the L1 to follow, takes it in at the bytes the L1 has for it.
    curve.lookup('a', true, held);
    curve.lookup('a', true, held);
    t.same(curve.ratios, [1 / 15, 1 / 15, 1 / 15, 1 / 15], 'the second lookup hits everywhere');
    t.end();
  },
);

void t.test('a lookup by link code reaches the sampled entry it names', (t) => {
  const curve = new HitRatioCurve(10_000, 's3-fifo', null, () => 1000);
  curve.lookupMissed('own');
  curve.stored('own', 1000);
  curve.linked('link', 'own');
  curve.lookupMissed('link');
  t.same(curve.ratios, [0.5, 0.5, 0.5, 0.5], 'the entry was held at every size');
  t.end();
});

void t.test('its memory is counted, and bounded whatever the number of keys', (t) => {
  const curve = new HitRatioCurve(64 * 1024 * 1024, 's3-fifo', null, () => 2000);
  for (let i = 0; i < 200_000; i++) {
    const name = `acme\n1\nu:${uuidOf(i)}`;
    curve.lookupMissed(name);
    curve.stored(name, 2000);
    curve.linked(`acme\n1\nc:${codeOf(i)}`, name);
  }
  t.ok(curve.rate < 0.01, `a sample of the keys (${curve.rate})`);
  t.ok(curve.bytes > 0 && curve.bytes < 2_000_000, `under 2 MB (${curve.bytes})`);
  t.end();
});
