// Batched counters: what prom-client reports equals one inc per value, and reads never lag.
import t from 'tap';
import { Counter, Registry } from 'prom-client';
import { SeriesBatch } from '../../../src/observability/batched-series.js';

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
