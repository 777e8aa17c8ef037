// Batched series: what prom-client reports equals one inc/observe per value, and reads never lag.
import t from 'tap';
import {
  AggregatorRegistry,
  Counter,
  Histogram,
  Registry,
  type PrometheusContentType,
} from 'prom-client';
import { BatchedHistogram, SeriesBatch } from '../../../src/observability/batched-series.js';

const BOUNDS = [0.001, 0.01, 0.1, 1];

void t.test(
  "a batched histogram reports what prom-client's reports for the same observations",
  async (t) => {
    const registry = new Registry();
    const batched = new BatchedHistogram({
      name: 'batched_seconds',
      help: 'h',
      labelNames: ['route'],
      buckets: BOUNDS,
    });
    const direct = new Histogram({
      name: 'direct_seconds',
      help: 'h',
      labelNames: ['route'],
      buckets: BOUNDS,
      registers: [registry],
    });
    const list = batched.series({ route: 'list' });
    // Values on the bounds, between them, below the first and above the last (only +Inf).
    const values = [0, 0.001, 0.0011, 0.01, 0.05, 0.1, 0.5, 1, 2, 30];
    for (let round = 0; round < 3; round++) {
      for (const v of values) {
        list.observe(v);
        direct.observe({ route: 'list' }, v);
      }
      const [b, d] = [await batched.get(), await direct.get()];
      // Sums are added in another order, so they may differ in the last bits; the rest is exact.
      const shape = (
        values: ReadonlyArray<{ metricName?: string; labels: object; value: number }>,
        name: string,
      ) =>
        values.map((v) => [
          v.metricName?.replace(name, 'x'),
          v.labels,
          v.metricName?.endsWith('_sum') ? Math.round(v.value * 1e9) : v.value,
        ]);
      t.same(shape(b.values, 'batched'), shape(d.values, 'direct'), `round ${round}`);
    }
    // And the exposition prom-client renders from it (AggregatorRegistry + merge) is the direct one's.
    const merged = Registry.merge([
      registry,
      AggregatorRegistry.aggregate<PrometheusContentType>([[await batched.get()]]),
    ]);
    const text = await merged.metrics();
    const lines = (name: string) =>
      text
        .split('\n')
        .filter((line) => line.includes(name))
        .map((line) => line.replace(name, 'x').replace(/_sum(\{[^}]*\})? .*/, '_sum'));
    t.same(
      lines('batched_seconds'),
      lines('direct_seconds'),
      'the same text, # HELP and # TYPE included',
    );
  },
);

void t.test('a batched histogram refuses label sets that do not match its names', (t) => {
  const batched = new BatchedHistogram({
    name: 'x_seconds',
    help: 'h',
    labelNames: ['route'],
    buckets: BOUNDS,
  });
  t.throws(() => batched.series({}), TypeError);
  t.throws(() => batched.series({ route: 'list', other: 'x' } as { route: string }), TypeError);
  t.equal(
    batched.series({ route: 'list' }),
    batched.series({ route: 'list' }),
    'one series per label set',
  );
  t.end();
});

void t.test(
  'a batched counter is seen by the next read, and prom-client still validates its labels',
  async (t) => {
    const batch = new SeriesBatch();
    const registry = new Registry();
    const counter = new Counter({
      name: 'hits_total',
      help: 'c',
      labelNames: ['tier'],
      registers: [registry],
      collect: batch.flush,
    });
    const l1 = batch.counter(counter, { tier: 'l1' });
    for (let i = 0; i < 5; i++) l1.inc();
    t.match(await registry.metrics(), /hits_total\{tier="l1"\} 5/);
    l1.inc();
    t.equal((await counter.get()).values[0]?.value, 6);
    const bad = batch.counter(counter, { nope: 'x' });
    bad.inc();
    await t.rejects(
      counter.get(),
      /label/i,
      'a label the metric does not have is refused when folded in',
    );
  },
);
