// The audit sampler: each hit is sampled with chance sampleRatio (geometric gaps), never more
// than maxPerSecond a second (a token bucket: one second's burst) however many hits come, and a reload applies from the next hit.
import t from 'tap';
import fc from 'fast-check';
import { AuditSampler, type SampleLimits } from '../../../../src/cache/audit/sampler.js';
import { Prng } from '../../../../src/sim/prng.js';
import { replayParams } from '../../../helpers/fc-replay.js';

function sampler(limits: () => SampleLimits, now: () => number, seed: number): AuditSampler {
  const prng = new Prng(seed);
  return new AuditSampler(limits, now, () => prng.next());
}

void t.test('the sampled share is the ratio, within chance', (t) => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      fc.constantFrom(0.001, 0.01, 0.1, 0.5),
      (seed, ratio) => {
        let clock = 0;
        const s = sampler(
          () => ({ sampleRatio: ratio, maxPerSecond: 1e9 }),
          () => clock,
          seed,
        );
        const hits = 200_000;
        let taken = 0;
        for (let i = 0; i < hits; i++) {
          clock += 1;
          if (s.take()) taken++;
        }
        const expected = hits * ratio;
        // Five standard deviations of a binomial count.
        return Math.abs(taken - expected) <= 5 * Math.sqrt(expected * (1 - ratio)) + 1;
      },
    ),
    { numRuns: 20, ...replayParams('AUDIT_SAMPLER', 42) },
  );
  t.end();
});

void t.test('at most maxPerSecond a second (one second of burst), whatever the hit rate', (t) => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      fc.integer({ min: 1, max: 20 }),
      fc.array(fc.integer({ min: 0, max: 50 }), { minLength: 100, maxLength: 2000 }),
      (seed, cap, steps) => {
        let clock = 0;
        const s = sampler(
          () => ({ sampleRatio: 1, maxPerSecond: cap }),
          () => clock,
          seed,
        );
        const times: number[] = [];
        for (const step of steps) {
          clock += step;
          if (s.take()) times.push(clock);
        }
        // A token bucket: over any span of T seconds, at most maxPerSecond·T plus one
        // second's burst (the bucket holds at most maxPerSecond tokens).
        for (let i = 0; i < times.length; i++)
          for (let j = i; j < times.length; j++)
            if (j - i + 1 > cap + (cap * (times[j]! - times[i]!)) / 1000 + 1e-9) return false;
        return true;
      },
    ),
    { numRuns: 100, ...replayParams('AUDIT_SAMPLER', 42) },
  );
  t.end();
});

void t.test('off samples nothing; a reload that turns it on applies at once', (t) => {
  t.plan(2);
  let limits: SampleLimits = { sampleRatio: 0, maxPerSecond: 5 };
  let clock = 0;
  const s = sampler(
    () => limits,
    () => clock,
    7,
  );
  let taken = 0;
  for (let i = 0; i < 10_000; i++) if (s.take()) taken++;
  t.equal(taken, 0, 'nothing sampled while off');
  limits = { sampleRatio: 1, maxPerSecond: 5 };
  clock += 1000;
  t.equal(s.take(), true, 'the first hit after the reload');
});
