// L1: bounded in bytes with per-item overhead counted, evictions counted, oversized entries refused.
import t from 'tap';
import { L1Cache } from '../../../../src/cache/l1/l1.js';
import { GatewayMetrics } from '../../../../src/observability/metrics.js';
import { makeEntry, metricValue } from '../../../helpers/redis-tier.js';

const body = (bytes: number) => Buffer.alloc(bytes, 'x');

void t.test(
  'stays within maxBytes, evicting least recently used entries and counting them',
  async (t) => {
    const metrics = new GatewayMetrics({ defaultMetrics: false });
    const l1 = new L1Cache(64 * 1024, metrics);
    for (let i = 0; i < 100; i++)
      l1.set(`k${i}`, makeEntry({ body: body(4096), gzip: null, br: null }));
    t.ok(l1.bytes <= 64 * 1024, `within the bound (${l1.bytes} bytes)`);
    t.ok(
      l1.size < 16,
      `fewer items than the bodies alone would allow, overhead counted (${l1.size})`,
    );
    t.equal(l1.get('k0'), undefined, 'the oldest was evicted');
    t.ok(l1.get('k99'), 'the newest is held');
    t.equal(
      await metricValue(metrics, 'recgw_cache_evictions_total', { tier: 'l1' }),
      100 - l1.size,
    );
    await metrics.scrape();
    t.equal(await metricValue(metrics, 'recgw_cache_entries', { tier: 'l1' }), l1.size);
    t.equal(await metricValue(metrics, 'recgw_cache_bytes', { tier: 'l1' }), l1.bytes);
  },
);

void t.test(
  'an entry larger than the whole bound is refused, not allowed to flush everything',
  (t) => {
    const l1 = new L1Cache(16 * 1024, new GatewayMetrics({ defaultMetrics: false }));
    l1.set('small', makeEntry({ body: body(1024), gzip: null, br: null }));
    l1.set('huge', makeEntry({ body: body(64 * 1024), gzip: null, br: null }));
    t.equal(l1.get('huge'), undefined);
    t.ok(l1.get('small'), 'the rest stays');
    t.end();
  },
);

void t.test('peek does not refresh recency (room for three items)', (t) => {
  const l1 = new L1Cache(3500, new GatewayMetrics({ defaultMetrics: false }));
  l1.set('a', makeEntry({ body: body(300), gzip: null, br: null }));
  l1.set('b', makeEntry({ body: body(300), gzip: null, br: null }));
  l1.peek('a');
  t.ok(l1.peek('b'), 'b held');
  l1.set('c', makeEntry({ body: body(300), gzip: null, br: null }));
  l1.set('d', makeEntry({ body: body(300), gzip: null, br: null }));
  t.equal(l1.peek('a'), undefined, 'a was still the least recently used');
  t.end();
});

/** A 64 KiB S3-FIFO L1 whose eight `hot` keys were each asked three times. */
function s3FifoWithHotKeys(): L1Cache {
  const l1 = new L1Cache(64 * 1024, new GatewayMetrics({ defaultMetrics: false }), 's3-fifo');
  for (let round = 0; round < 3; round++)
    for (let i = 0; i < 8; i++) {
      if (l1.get(`hot${i}`) === undefined)
        l1.set(`hot${i}`, makeEntry({ body: body(1024), gzip: null, br: null }));
    }
  return l1;
}

void t.test(
  's3-fifo: within maxBytes with overhead counted, and a sweep of one-time keys leaves the repeated ones',
  (t) => {
    const l1 = s3FifoWithHotKeys();
    for (let i = 0; i < 200; i++) {
      l1.set(`cold${i}`, makeEntry({ body: body(1024), gzip: null, br: null }));
      t.ok(l1.bytes <= 64 * 1024, `within the bound after ${i} (${l1.bytes} bytes)`);
    }
    for (let i = 0; i < 8; i++) t.ok(l1.peek(`hot${i}`), `hot${i} held through the sweep`);
    l1.delete('hot3');
    t.equal(l1.get('hot3'), undefined, 'deleted means gone');
    t.end();
  },
);

void t.test(
  's3-fifo: storing a value again (encodings added, a list page refreshing it) is no use of it: a sweep of such keys leaves the repeated ones',
  (t) => {
    const l1 = s3FifoWithHotKeys();
    for (let i = 0; i < 200; i++) {
      // Asked once, then stored again with its encodings, as tiers.compressLater does.
      if (l1.get(`cold${i}`) === undefined)
        l1.set(`cold${i}`, makeEntry({ body: body(1024), gzip: null, br: null }));
      l1.set(`cold${i}`, makeEntry({ body: body(1024), gzip: body(400), br: body(300) }));
    }
    const held = Array.from({ length: 8 }, (_, i) => l1.peek(`hot${i}`)).filter(Boolean).length;
    t.equal(held, 8, `every repeated key held through the sweep (${held} of 8)`);
    t.end();
  },
);

void t.test(
  'tenant shares: a workspace past its share evicts its own entries, even ones asked twice',
  (t) => {
    const make = (tenantShare: number | null) =>
      new L1Cache(
        256 * 1024,
        new GatewayMetrics({ defaultMetrics: false }),
        's3-fifo',
        tenantShare,
      );
    const run = (l1: L1Cache): number => {
      for (let round = 0; round < 3; round++)
        for (let i = 0; i < 20; i++)
          if (l1.get(`quiet\n1\nu:${i}`) === undefined)
            l1.set(`quiet\n1\nu:${i}`, makeEntry({ body: body(1024), gzip: null, br: null }));
      // The flood asks each of its recordings twice: S3-FIFO alone takes them for repeated asks.
      for (let i = 0; i < 2000; i++)
        for (let again = 0; again < 2; again++)
          if (l1.get(`flood\n1\nu:${i}`) === undefined)
            l1.set(`flood\n1\nu:${i}`, makeEntry({ body: body(1024), gzip: null, br: null }));
      let held = 0;
      for (let i = 0; i < 20; i++) if (l1.peek(`quiet\n1\nu:${i}`) !== undefined) held++;
      t.ok(l1.bytes <= 256 * 1024, `within the bound (${l1.bytes})`);
      return held;
    };
    t.equal(run(make(0.25)), 20, 'with shares, the quiet workspace keeps all of its entries');
    t.ok(run(make(null)) < 20, 'without shares, the flood pushes some out (the test can tell)');
    t.end();
  },
);

void t.test(
  "a recording's link-code name: found with its entry, costing a few dozen bytes beside it, gone with it",
  (t) => {
    const id = '0b0f3f8e-6c1a-4a62-9a55-1b7d5e1f2a3c';
    const own = `acme\n7\nu:${id}`;
    const link = 'acme\n7\nc:abcDEF_12';
    const alias = { kind: 'alias', target: `u:${id}`, staleUntil: Date.now() + 60_000 } as const;
    const withLink = makeEntry({ body: body(800), recordingId: id, linkId: 'abcDEF_12' });
    const withoutLink = makeEntry({ body: body(800), recordingId: id, linkId: null });

    const bare = new L1Cache(1024 * 1024, new GatewayMetrics({ defaultMetrics: false }));
    bare.set(own, withoutLink);
    const l1 = new L1Cache(1024 * 1024, new GatewayMetrics({ defaultMetrics: false }));
    l1.set(own, withLink);
    const nameCost = l1.bytes - bare.bytes;
    t.ok(nameCost > link.length && nameCost <= 100, `the link name counts ${nameCost} bytes`);
    t.equal(l1.get(link), withLink, 'found by its link code');
    t.equal(l1.peek(link), withLink, 'and by peek');
    l1.set(link, alias);
    t.equal(l1.bytes - bare.bytes, nameCost, 'storing its alias again costs nothing more');
    t.equal(l1.size, 2, 'one entry and one name');

    l1.delete(link);
    t.equal(l1.get(link), undefined, 'a purge of the link code drops the name');
    t.equal(l1.get(own), withLink, 'and leaves the entry');
    l1.set(own, withoutLink);
    l1.set(own, withLink);
    l1.set(own, withoutLink);
    t.equal(
      l1.get(link),
      undefined,
      'an entry replaced by one without the code takes its name along',
    );
    l1.set(own, withLink);
    l1.delete(own);
    t.equal(l1.get(link), undefined, 'a deleted entry takes its name along');
    t.equal(l1.size, 0);
    t.end();
  },
);

void t.test(
  'link-code names leave with their evicted entries, and other aliases stay items',
  (t) => {
    for (const policy of ['lru', 's3-fifo'] as const) {
      const l1 = new L1Cache(64 * 1024, new GatewayMetrics({ defaultMetrics: false }), policy);
      const idOf = (i: number) => `0b0f3f8e-6c1a-4a62-9a55-${String(i).padStart(12, '0')}`;
      for (let i = 0; i < 200; i++)
        l1.set(
          `acme\n1\nu:${idOf(i)}`,
          makeEntry({ body: body(800), recordingId: idOf(i), linkId: `code${i}` }),
        );
      let names = 0;
      let entries = 0;
      for (let i = 0; i < 200; i++) {
        if (l1.peek(`acme\n1\nc:code${i}`) !== undefined) names++;
        if (l1.peek(`acme\n1\nu:${idOf(i)}`) !== undefined) entries++;
      }
      t.ok(entries > 0 && entries < 200, `${policy}: some entries evicted (${entries} held)`);
      t.equal(names, entries, `${policy}: a name for each entry held, none for the evicted`);
      t.equal(l1.size, 2 * entries, `${policy}: no name left behind`);
      t.ok(l1.bytes <= 64 * 1024, `${policy}: within the bound`);

      // Another spelling the upstream answered for this recording: an alias item of its own.
      const other = {
        kind: 'alias',
        target: `u:${idOf(199)}`,
        staleUntil: Date.now() + 60_000,
      } as const;
      l1.set('acme\n1\nc:OTHER', other);
      t.equal(l1.peek('acme\n1\nc:OTHER'), other, `${policy}: held as the alias it is`);
    }
    t.end();
  },
);
