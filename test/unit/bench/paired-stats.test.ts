// The bench's verdicts on a noisy host: the round order, paired ratios, the control's spread, and
// the two "ahead" rules the L1-hit targets use.
import t from 'tap';
import { settingsFromEnv } from '../../../bench/context.js';
import { startInRoundOrder } from '../../../bench/fresh-rounds.js';
import {
  aheadBeyondSpread,
  aheadEveryRound,
  fewerByMedian,
  pairedRatios,
  roundOrder,
  spreadOf,
} from '../../../bench/paired-stats.js';

void t.test('variants run forwards, then backwards: neighbours swap places every round', (t) => {
  t.same(roundOrder(3, 0), [0, 1, 2]);
  t.same(roundOrder(3, 1), [2, 1, 0]);
  t.same(roundOrder(3, 2), [0, 1, 2]);
  // Over two rounds every variant runs once before and once after each neighbour.
  for (let i = 0; i + 1 < 5; i++) {
    const before = [0, 1].map((round) => {
      const order = roundOrder(5, round);
      return order.indexOf(i) < order.indexOf(i + 1);
    });
    t.same(before.sort(), [false, true], `${i} and ${i + 1} trade places`);
  }
  t.end();
});

void t.test(
  'the long case runs each start order equally often, whatever count is asked for',
  (t) => {
    const variants = 6;
    for (let asked = 1; asked <= 9; asked++) {
      const { rounds } = settingsFromEnv({ BENCH_LONG_ROUNDS: String(asked) }).long;
      t.ok(rounds >= asked, `${asked} asked, ${rounds} run`);
      // Every variant's mean place in the start order is the middle: no server starts late more often.
      for (let v = 0; v < variants; v++) {
        let places = 0;
        for (let round = 0; round < rounds; round++)
          places += roundOrder(variants, round).indexOf(v);
        t.equal(places / rounds, (variants - 1) / 2, `${asked} asked: variant ${v}'s mean place`);
      }
    }
    t.equal(settingsFromEnv({}).long.rounds, 6, 'six rounds by default');
    t.end();
  },
);

void t.test(
  "the fresh-process cases start each round's servers in its order, and return them by variant",
  async (t) => {
    const variants = 6;
    const places = Array.from({ length: variants }, () => 0);
    const { rounds } = settingsFromEnv({ BENCH_ROUNDS: '3' });
    t.equal(rounds, 4, 'the short cases round an odd count up too');
    for (let round = 0; round < rounds; round++) {
      const started: number[] = [];
      const servers = await startInRoundOrder(variants, round, async (i) => {
        // A slower start for some: each start waits for the one before it.
        await new Promise((resolve) => setTimeout(resolve, (i * 7) % 3));
        started.push(i);
        return `server ${i}`;
      });
      t.same(started, round % 2 === 0 ? [0, 1, 2, 3, 4, 5] : [5, 4, 3, 2, 1, 0], `round ${round}`);
      t.same(
        servers,
        Array.from({ length: variants }, (_, i) => `server ${i}`),
        'returned by variant, not by start',
      );
      started.forEach((variant, place) => (places[variant]! += place));
    }
    for (let v = 0; v < variants; v++)
      t.equal(places[v]! / rounds, (variants - 1) / 2, `variant ${v}'s mean start place`);
  },
);

void t.test('paired ratios divide round by round, and refuse series of different lengths', (t) => {
  t.same(pairedRatios([10, 30], [5, 10]), [2, 3]);
  t.throws(() => pairedRatios([1, 2], [1]), RangeError);
  t.end();
});

void t.test("the control's spread is its widest distance from 1, either way", (t) => {
  const spread = spreadOf({ rps: [1.02, 0.9, 1.05], cpu: [0.97, 1.08, 1] });
  t.equal(Math.round(spread.rps * 1000), 100, 'a round 10% slower counts as much as 10% faster');
  t.equal(Math.round(spread.cpu * 1000), 80);
  t.end();
});

void t.test('ahead in every round needs every pair: more req/s and less CPU', (t) => {
  t.ok(aheadEveryRound({ rps: [1.1, 1.05, 1.2], cpu: [0.9, 0.95, 0.85] }));
  t.notOk(aheadEveryRound({ rps: [1.1, 0.99, 1.2], cpu: [0.9, 0.95, 0.85] }), 'one slower round');
  t.notOk(aheadEveryRound({ rps: [1.1, 1.05, 1.2], cpu: [0.9, 1.01, 0.85] }), 'one costlier round');
  t.end();
});

void t.test('ahead beyond the spread: the median pair past the control on both measures', (t) => {
  const spread = { rps: 0.06, cpu: 0.05 };
  t.ok(aheadBeyondSpread({ rps: [1.07, 1.2, 0.9], cpu: [0.94, 0.8, 1.1] }, spread));
  t.notOk(
    aheadBeyondSpread({ rps: [1.05, 1.2, 0.9], cpu: [0.94, 0.8, 1.1] }, spread),
    'a median lead of 5% is within a spread of 6%',
  );
  t.notOk(
    aheadBeyondSpread({ rps: [1.07, 1.2, 0.9], cpu: [0.96, 0.8, 1.1] }, spread),
    'faster, but not cheaper by more than the spread',
  );
  t.notOk(aheadBeyondSpread({ rps: [1, 1, 1], cpu: [1, 1, 1] }, { rps: 0, cpu: 0 }), 'level');
  t.end();
});

void t.test(
  'fewer instructions: the median window below the reference least, one outlier aside',
  (t) => {
    // The gateway's list windows of one run: one held a collection.
    t.ok(fewerByMedian([81_029, 82_899, 82_500, 83_000, 209_317], [89_660, 90_296, 89_954]));
    t.notOk(fewerByMedian([81_000, 90_000, 91_000], [89_660, 90_296]), 'median above the least');
    t.notOk(fewerByMedian([89_660], [89_660]), 'equal counts are not fewer');
    t.end();
  },
);
