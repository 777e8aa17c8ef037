// An entry an app finds stale in L2, never having held it itself, is served stale and refreshed
// in the background by that first read: stale-while-revalidate's one refresh, not one left for
// whichever request comes next.
import t from 'tap';
import { FakeClock } from '../../helpers/fake-clock.js';
import { getRedis, waitFor } from '../../helpers/redis.js';
import { startSharedGateways } from '../../helpers/shared-gateways.js';

const LIST = '/api/external/v2/recordings';

void t.test('a stale entry found in L2 is refreshed by the read that found it', async (t) => {
  // Near real time: Redis expires values by its own clock.
  const clock = new FakeClock(Date.now());
  const {
    sim,
    gateways: [a, b],
  } = await startSharedGateways(t, await getRedis(t), {
    clock,
    simOptions: { clock },
    config: {
      cache: { ttl: { recording: '10s' }, staleWhileRevalidate: '1m', refreshAhead: false },
    },
  });
  const path = `${LIST}/${sim.data['acme']![5]!.id}`;
  // b's key is verified (and the workspace's generation known) on another recording.
  t.equal((await b.get(`${LIST}/${sim.data['acme']![6]!.id}`)).status, 200);
  t.equal((await a.get(path)).status, 200, 'a stores the entry in L2');
  clock.advance(11_000);
  const before = sim.counters.total;
  const stale = await b.get(path);
  t.match(stale.headers['cache-status'], /^recgw; hit; ttl=-/, 'b serves it stale from L2');
  await waitFor(() => sim.counters.total > before, 5_000, "the stale read's refresh upstream");
  t.equal(sim.counters.total - before, 1, 'one refresh');
});
