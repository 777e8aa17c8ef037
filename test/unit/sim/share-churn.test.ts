/** Churn by share: which recordings change and when follows the seed and the clock, not requests. */
import t from 'tap';
import { main } from '../../../src/sim/main.js';
import { ShareChurn } from '../../../src/sim/share-churn.js';
import type { Recording } from '../../../src/recording.js';
import { base, call, manualClock, parseAs, startTestSim } from './sim-fixture.js';

const MINUTE = 60_000;

void t.test('the schedule: a share of recordings, each about every `everyMs`, seeded', (t) => {
  const counts = new Map([['acme', 1000]]);
  const options = { share: 0.05, everyMs: 10 * MINUTE };
  const a = new ShareChurn(counts, options, 7, 0);
  t.equal(a.changing('acme').length, 50, '5% of 1,000');
  t.same(new ShareChurn(counts, options, 7, 0).changing('acme'), a.changing('acme'), 'same seed');
  t.not(new ShareChurn(counts, options, 8, 0).changing('acme').join(), a.changing('acme').join());
  const changes = new Map<number, number[]>();
  a.catchUp(10 * 60 * MINUTE, (_ws, index, at) =>
    changes.set(index, [...(changes.get(index) ?? []), at]),
  );
  t.same(
    [...changes.keys()].sort((x, y) => x - y),
    a.changing('acme'),
    'only those change',
  );
  const total = [...changes.values()].reduce((sum, at) => sum + at.length, 0);
  // Ten hours at a mean gap of ten minutes: about 60 changes each.
  t.ok(total > 50 * 50 && total < 50 * 70, `${total} changes ≈ 50 × 60`);
  for (const at of changes.values())
    for (let i = 1; i < at.length; i++) {
      const gap = at[i]! - at[i - 1]!;
      t.ok(gap >= 5 * MINUTE && gap <= 15 * MINUTE, 'each gap within 0.5…1.5 of everyMs');
    }
  // Caught up in many small steps or one big one: the same changes at the same instants.
  const stepped = new ShareChurn(counts, options, 7, 0);
  const seen = new Map<number, number[]>();
  for (let now = 0; now <= 10 * 60 * MINUTE; now += 7_919)
    stepped.catchUp(now, (_ws, index, at) => seen.set(index, [...(seen.get(index) ?? []), at]));
  stepped.catchUp(10 * 60 * MINUTE, (_ws, index, at) =>
    seen.set(index, [...(seen.get(index) ?? []), at]),
  );
  t.same(seen, changes, 'independent of when it is caught up');
  t.throws(() => new ShareChurn(counts, { share: 2, everyMs: 1 }, 1, 0), /churn\.share/);
  t.throws(() => new ShareChurn(counts, { share: 0.1, everyMs: 0 }, 1, 0), /churn\.everyMs/);
  t.end();
});

void t.test(
  'the simulator serves the changes by its clock, changed at their own instants',
  async (t) => {
    const clock = manualClock();
    const start = clock.now();
    const sim = await startTestSim(t, {
      workspaces: ['acme'],
      recordingsPerWorkspace: 200,
      clock,
      churn: { share: 0.1, everyMs: 10 * MINUTE },
    });
    const before = sim.data['acme']!.map((r) => r.updated_at);
    clock.advance(30 * MINUTE);
    const key = sim.keys['acme']![0]!;
    // A request catches the data up to the clock.
    const answer = await call(sim, `${base('acme')}/recordings?page_size=100`, { key });
    t.equal(answer.status, 200);
    sim.catchUp();
    const after = sim.data['acme']!;
    const changed = after.filter((r, i) => r.updated_at !== before[i]);
    t.equal(changed.length, 20, 'the changing 10%, each changed at least once in three periods');
    for (const r of changed) {
      const at = Date.parse(r.updated_at);
      t.ok(at > start && at <= start + 30 * MINUTE + 1000, 'updated_at is when it changed');
    }
    const served = parseAs<{ recordings: Recording[] }>(answer.text).recordings;
    t.same(
      served.map((r) => r.updated_at),
      after.slice(0, 100).map((r) => r.updated_at),
      'the answer showed the data as of its request',
    );
    clock.advance(365 * 24 * 60 * MINUTE);
    sim.catchUp();
    t.equal(
      sim.data['acme']!.filter((r, i) => r.updated_at !== before[i]).length,
      20,
      'a year on, the other 90% have never changed',
    );
  },
);

void t.test('SIM_CHURN_SHARE and SIM_CHURN_EVERY', async (t) => {
  await t.rejects(
    main({ SIM_PORT: '0', SIM_CHURN_SHARE: '1.5' }),
    /SIM_CHURN_SHARE must be a fraction/,
  );
  await t.rejects(
    main({ SIM_PORT: '0', SIM_CHURN_SHARE: '0.05', SIM_CHURN_EVERY: 'often' }),
    /SIM_CHURN_EVERY must be a positive duration/,
  );
});
