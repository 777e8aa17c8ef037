// Batched series: what prom-client reports equals one inc/observe per value, and reads never lag.
import t from 'tap';
import { Counter, Histogram, Registry } from 'prom-client';
import { SeriesBatch } from '../../../src/observability/batched-series.js';

const BOUNDS = [0.001, 0.01, 0.1, 1];

function pair(batch: SeriesBatch): { batched: Histogram<'route'>; direct: Histogram<'route'>; registry: Registry } {
  const registry = new Registry();
  const batched = new Histogram({ name: 'batched_seconds', help: 'h', labelNames: ['route'], buckets: BOUNDS, registers: [registry], collect: batch.flush });
  const direct = new Histogram({ name: 'direct_seconds', help: 'h', labelNames: ['route'], buckets: BOUNDS, registers: [registry] });
  return { batched, direct, registry };
}

void t.test('a batched histogram reports what one observe per value reports', async (t) => {
  const batch = new SeriesBatch();
  const { batched, direct } = pair(batch);
  const list = batch.histogram(batched, { route: 'list' });
  // Values on the bounds, between them, below the first and above the last (only +Inf).
  const values = [0, 0.001, 0.0011, 0.01, 0.05, 0.1, 0.5, 1, 2, 30];
  for (let round = 0; round < 3; round++) {
    for (const v of values) {
      list.observe(v);
      direct.observe({ route: 'list' }, v);
    }
    // Read between rounds: a flush must add to what earlier flushes left, not replace it.
    const [b, d] = [await batched.get(), await direct.get()];
    // Sums are added in another order, so they may differ in the last bits; the rest is exact.
    const shape = (values: typeof b.values, name: string) =>
      values.map((v) => [v.metricName?.replace(name, 'x'), v.labels, v.metricName?.endsWith('_sum') ? Math.round(v.value * 1e9) : v.value]);
    t.same(shape(b.values, 'batched'), shape(d.values, 'direct'), `round ${round}`);
  }
});

void t.test('a batched counter is seen by the next read, and prom-client still validates its labels', async (t) => {
  const batch = new SeriesBatch();
  const registry = new Registry();
  const counter = new Counter({ name: 'hits_total', help: 'c', labelNames: ['tier'], registers: [registry], collect: batch.flush });
  const l1 = batch.counter(counter, { tier: 'l1' });
  for (let i = 0; i < 5; i++) l1.inc();
  t.match(await registry.metrics(), /hits_total\{tier="l1"\} 5/);
  l1.inc();
  t.equal((await counter.get()).values[0]?.value, 6);
  const bad = batch.counter(counter, { nope: 'x' });
  bad.inc();
  await t.rejects(counter.get(), /label/i, 'a label the metric does not have is refused when folded in');
});
