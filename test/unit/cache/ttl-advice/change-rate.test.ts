// The change-rate estimate: a known Poisson change rate is recovered from revalidations at
// irregular ages; the estimate stays in its range, rises with each change seen and falls with
// each unchanged interval (fast-check, seed printed on failure); observations decay.
import t from 'tap';
import fc from 'fast-check';
import { ChangeRateEstimate } from '../../../../src/cache/ttl-advice/change-rate.js';
import { Prng, hashSeed } from '../../../../src/sim/prng.js';
import { assertHeld, replayParams } from '../../../helpers/fc-replay.js';

const HOUR = 3_600_000;
const T0 = 1_764_000_000_000;

for (const meanSeconds of [60, 600, 3600]) {
  void t.test(`a change every ${meanSeconds} s on average is recovered within 10%`, (t) => {
    const mu = 1 / meanSeconds;
    const prng = new Prng(hashSeed(`change-rate:${meanSeconds}`));
    // A long half-life: the observations are all made at once here.
    const estimate = new ChangeRateEstimate(1000 * HOUR);
    for (let i = 0; i < 20_000; i++) {
      // Ages as refreshes see them: a TTL of 5 s to 10 min, plus the wait for the next reader.
      const ageMs = 5000 + prng.next() * 600_000;
      const changed = prng.chance(-Math.expm1(-mu * (ageMs / 1000)));
      estimate.observe(ageMs, changed, T0);
    }
    const found = estimate.rate(T0).perSecond!;
    t.comment(`true ${mu.toExponential(3)}/s, estimated ${found.toExponential(3)}/s`);
    t.ok(Math.abs(found - mu) <= 0.1 * mu, `${found} within 10% of ${mu}`);
    t.end();
  });
}

void t.test(
  'no observation: null; no change seen: 0; nothing but changes: the top of the range',
  (t) => {
    const estimate = new ChangeRateEstimate(HOUR);
    t.equal(estimate.rate(T0).perSecond, null);
    estimate.observe(30_000, false, T0);
    t.equal(estimate.rate(T0).perSecond, 0);
    const changes = new ChangeRateEstimate(HOUR);
    changes.observe(30_000, true, T0);
    t.equal(changes.rate(T0).perSecond, 10);
    t.end();
  },
);

void t.test('observations lose half their weight per half-life', (t) => {
  const estimate = new ChangeRateEstimate(HOUR);
  estimate.observe(10_000, false, T0);
  estimate.observe(10_000, true, T0);
  const later = estimate.rate(T0 + HOUR);
  t.ok(Math.abs(later.unchanged - 0.5) < 1e-9 && Math.abs(later.changed - 0.5) < 1e-9);
  // Both kinds decay alike: the estimate itself is unchanged by time alone.
  t.ok(Math.abs(later.perSecond! - estimate.rate(T0).perSecond!) < 1e-9);
  t.end();
});

void t.test(
  'the estimate is bounded, rises with a change and falls with an unchanged interval',
  (t) => {
    const observation = fc.record({
      ageMs: fc.integer({ min: 0, max: 7 * 86_400_000 }),
      changed: fc.boolean(),
    });
    const outcome = fc.check(
      fc.property(
        fc.array(observation, { minLength: 1, maxLength: 60 }),
        observation,
        (seen, next) => {
          const estimate = new ChangeRateEstimate(HOUR);
          for (const { ageMs, changed } of seen) estimate.observe(ageMs, changed, T0);
          const before = estimate.rate(T0).perSecond!;
          if (!(before === 0 || (before >= 1 / (365 * 86_400) - 1e-15 && before <= 10)))
            return false;
          estimate.observe(next.ageMs, next.changed, T0);
          const after = estimate.rate(T0).perSecond!;
          // Relative slack for the bisection's last step.
          return next.changed ? after >= before * (1 - 1e-9) : after <= before * (1 + 1e-9);
        },
      ),
      { numRuns: 400, ...replayParams('CHANGE_RATE', 20261129) },
    );
    assertHeld(t, outcome);
    t.end();
  },
);
