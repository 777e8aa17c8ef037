// The per-origin breakers and the worst-state gauge, with a registry small enough to evict.
import t from 'tap';
import { BreakerRegistry } from '../../../src/upstream/breaker-registry.js';

function setup(maxOrigins: number): {
  registry: BreakerRegistry;
  clock: { ms: number; now(): number };
  reports: number[];
} {
  const clock = {
    ms: 1_000_000,
    now() {
      return this.ms;
    },
  };
  const reports: number[] = [];
  const registry = new BreakerRegistry({
    failureThreshold: 1,
    resetTimeout: 10_000,
    clock,
    maxOrigins,
    report: (worst) => reports.push(worst),
  });
  return { registry, clock, reports };
}

void t.test('the gauge follows the worst state over the origins', (t) => {
  const { registry, clock, reports } = setup(10);
  const a = registry.for('http://a.test');
  t.equal(registry.for('http://a.test'), a, 'one breaker per origin');
  const b = registry.for('http://b.test');
  a.fail(a.acquire());
  t.same(reports, [0, 2], 'one open origin: 2');
  clock.ms += 10_000;
  const trial = a.acquire();
  t.same(reports, [0, 2, 1], 'its trial: half-open');
  b.fail(b.acquire());
  t.same(reports, [0, 2, 1, 2], 'another opens: 2 again');
  a.succeed(trial);
  t.same(reports, [0, 2, 1, 2], 'still 2 while b is open');
  t.end();
});

void t.test('evicting an open breaker takes its state out of the gauge', (t) => {
  const { registry, reports } = setup(1);
  const a = registry.for('http://a.test');
  a.fail(a.acquire());
  registry.for('http://b.test');
  t.same(reports, [0, 2, 0]);
  t.end();
});

void t.test(
  'an evicted breaker moved by a fetch that began before the eviction does not touch the gauge',
  (t) => {
    const { registry, reports } = setup(1);
    const evicted = registry.for('http://a.test');
    const permit = evicted.acquire();
    const current = registry.for('http://b.test');
    evicted.fail(permit);
    t.equal(evicted.state, 'open', 'the old breaker did open');
    t.same(reports, [0], 'but the gauge stays closed');
    // The counts are still right: the breaker the registry holds opens and closes the gauge alone.
    current.fail(current.acquire());
    t.same(reports, [0, 2]);
    registry.for('http://a.test');
    t.same(reports, [0, 2, 0], 'evicting the open one brings the gauge back to 0');
    t.end();
  },
);
