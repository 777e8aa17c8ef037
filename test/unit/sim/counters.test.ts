/** Request counters, and byte-for-byte determinism of the answers across simulator instances. */
import t from 'tap';
import { SimCounterStore } from '../../../src/sim/counters.js';
import { base, call, manualClock, startTestSim } from './sim-fixture.js';

void t.test('counts per workspace, per path, and records each routed request', async (t) => {
  const clock = manualClock();
  const sim = await startTestSim(t, { clock });
  const key = sim.keys['acme']![0]!;
  const id = sim.data['acme']![3]!.id;
  await call(sim, `${base('acme')}/recordings?page_number=2`, { key });
  clock.advance(1000);
  await call(sim, `${base('acme')}/recordings/${id}`, { key: 'wrong' });
  await call(sim, `${base('globex')}/recordings`, { key: sim.keys['globex']![0]! });
  await call(sim, '/nowhere');

  t.equal(sim.counters.total, 4, 'every request');
  t.equal(sim.counters.byWorkspace('acme'), 2);
  t.equal(sim.counters.byWorkspace('globex'), 1);
  t.equal(sim.counters.byWorkspace('initech'), 0);
  t.equal(sim.counters.byPath(`${base('acme')}/recordings`), 1, 'path without the query string');
  t.equal(sim.counters.byPath(`${base('acme')}/recordings/${id}`), 1);
  t.equal(sim.counters.byPath('/nowhere'), 1);
  t.same(sim.counters.requests, [
    { workspace: 'acme', resource: 'list', keyValid: true, at: clock.now() - 1000 },
    { workspace: 'acme', resource: 'recording', id, keyValid: false, at: clock.now() },
    { workspace: 'globex', resource: 'list', keyValid: true, at: clock.now() },
  ]);

  sim.faults.set({ kind: 'status', status: 500 }, { times: 1 });
  await call(sim, `${base('acme')}/recordings`, { key });
  t.equal(sim.counters.byWorkspace('acme'), 3, 'faulted requests count too');

  sim.counters.reset();
  t.equal(sim.counters.total, 0);
  t.equal(sim.counters.byWorkspace('acme'), 0);
  t.same(sim.counters.requests, []);
});

void t.test('the request ring keeps the most recent entries in order', (t) => {
  const store = new SimCounterStore(3);
  for (let i = 0; i < 5; i++)
    store.record({ workspace: `w${i}`, resource: 'list', keyValid: true, at: i });
  t.same(
    store.requests.map((r) => r.at),
    [2, 3, 4],
  );
  t.equal(store.byWorkspace('w0'), 1, 'counts are not bounded by the ring');
  t.end();
});

void t.test('same seed → same bytes, apart from the transcoded_url signature', async (t) => {
  const clock = manualClock();
  const a = await startTestSim(t, { seed: 42, clock, urlScheme: 'cloud-cdn' });
  const b = await startTestSim(t, { seed: 42, clock, urlScheme: 'cloud-cdn' });
  const c = await startTestSim(t, { seed: 43, clock, urlScheme: 'cloud-cdn' });
  const key = a.keys['initech']![0]!;
  const path = `${base('initech')}/recordings?page_size=100`;
  const [ta, tb, tc] = await Promise.all(
    [a, b, c].map(async (sim) => (await call(sim, path, { key })).text),
  );
  const unsign = (text: string | undefined): string =>
    (text ?? '').replace(/&Signature=[A-Za-z0-9_=-]+/g, '&Signature=…');
  t.not(ta, tb, 'signatures differ (fresh keys per simulator)');
  t.equal(unsign(ta), unsign(tb), 'everything else is identical');
  t.not(unsign(ta), unsign(tc), 'another seed gives other data');
  t.same(a.data, b.data);
});
