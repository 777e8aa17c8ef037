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
  const l1 = new L1Cache(4800, new GatewayMetrics({ defaultMetrics: false }));
  l1.set('a', makeEntry({ body: body(300), gzip: null, br: null }));
  l1.set('b', makeEntry({ body: body(300), gzip: null, br: null }));
  l1.peek('a');
  t.ok(l1.peek('b'), 'b held');
  l1.set('c', makeEntry({ body: body(300), gzip: null, br: null }));
  l1.set('d', makeEntry({ body: body(300), gzip: null, br: null }));
  t.equal(l1.peek('a'), undefined, 'a was still the least recently used');
  t.end();
});

void t.test(
  's3-fifo: within maxBytes with overhead counted, and a sweep of one-time keys leaves the repeated ones',
  (t) => {
    const l1 = new L1Cache(64 * 1024, new GatewayMetrics({ defaultMetrics: false }), 's3-fifo');
    for (let round = 0; round < 3; round++)
      for (let i = 0; i < 8; i++) {
        if (l1.get(`hot${i}`) === undefined)
          l1.set(`hot${i}`, makeEntry({ body: body(1024), gzip: null, br: null }));
      }
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
