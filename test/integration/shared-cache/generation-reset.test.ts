// Redis restarted without its data: purge generations start again from 0, and no app may serve an entry stored before a purge.
import t from 'tap';
import { Redis } from 'ioredis';
import { purgeChannel } from '../../../src/cache/redis-keys.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { startPrivateRedis, waitFor } from '../../helpers/redis.js';
import { generationOf, purge, startSharedGateways, upstreamPath, waitShared, type SharedFleet } from '../../helpers/shared-gateways.js';

const LIST = '/api/external/v2/recordings';

void t.test('after Redis loses its data, a purge still reaches every app and no older entry comes back', async (t) => {
  const redis = await startPrivateRedis(t);
  // Moving the simulator's clock makes each refetched body (signed URL, ETag) tell which fetch it came from.
  const simClock = new FakeClock(Date.now());
  const fleet: SharedFleet = await startSharedGateways(t, redis, { simOptions: { clock: simClock } });
  const { sim, gateways: [a, b] } = fleet;
  const id = sim.data['acme']![5]!.id;
  const path = `${LIST}/${id}`;
  const etagOn = async (gw: typeof a): Promise<string> => (await gw.get(path)).headers['etag'] as string;

  // Generation 0: cached on both apps.
  const e0 = await etagOn(a);
  t.equal(await etagOn(b), e0);
  // A purge moves everyone to generation 1; both refetch (once, through L2).
  simClock.advance(5_000);
  t.equal((await purge(a, { workspace: 'acme' })).status, 200);
  await waitFor(() => generationOf(b)?.all === 1, 2000, 'B at generation 1');
  const e1 = await etagOn(a);
  t.not(e1, e0);
  t.equal(await etagOn(b), e1);
  t.equal(sim.counters.byPath(upstreamPath(id)), 2);

  // Redis restarts empty: its counters are back at 0. Both apps reconnect and resubscribe.
  await redis.stop();
  await redis.start();
  await waitShared(fleet, redis);
  // Each app reloads acme's generation on reconnecting, sees Redis behind it, and starts over.
  await waitFor(() => generationOf(a)?.all === 0 && generationOf(b)?.all === 0, 5000, 'both apps back at generation 0');
  for (const gw of [a, b]) {
    const etag = await etagOn(gw);
    t.not(etag, e0, 'the entry from before the first purge never comes back');
  }

  // The operator purges again: Redis counts 0 → 1. The next request on both apps must not be
  // answered from an entry stored before this purge.
  simClock.advance(5_000);
  const purged = await purge(a, { workspace: 'acme' });
  t.equal(purged.status, 200);
  await waitFor(() => generationOf(b)?.all === purged.json().generation.all, 2000, 'B at the announced generation');
  const before = new Set([e0, e1]);
  const callsBefore = sim.counters.byPath(upstreamPath(id));
  for (const [name, gw] of [['A', a], ['B', b]] as const) {
    const etag = await etagOn(gw);
    t.notOk(before.has(etag), `${name} serves an entry stored after the purge`);
  }
  t.ok(sim.counters.byPath(upstreamPath(id)) > callsBefore, 'the purged recording was fetched again');
});

void t.test('a late announcement of an older generation (Redis still ahead) changes nothing', async (t) => {
  const redis = await startPrivateRedis(t);
  const { sim, gateways: [a, b] } = await startSharedGateways(t, redis);
  const path = `${LIST}/${sim.data['acme']![6]!.id}`;
  for (let i = 0; i < 2; i++) t.equal((await purge(a, { workspace: 'acme' })).status, 200);
  await waitFor(() => generationOf(b)?.all === 2, 2000, 'B at generation 2');
  t.equal((await a.get(path)).status, 200);
  t.match((await b.get(path)).headers['cache-status'], /^recgw; hit/);
  const raw = new Redis(redis.url);
  t.teardown(() => raw.quit());
  // What a purge published out of order looks like: generation 1 arriving after 2.
  await raw.publish(purgeChannel(redis.keyPrefix), JSON.stringify({ workspace: 'acme', generation: { all: 1, list: 0 }, keys: [] }));
  await new Promise((resolve) => setTimeout(resolve, 300));
  for (const gw of [a, b]) {
    t.same(generationOf(gw), { all: 2, list: 0 }, 'still at generation 2');
    t.match((await gw.get(path)).headers['cache-status'], /^recgw; hit/, 'and still answering from L1');
  }
  t.equal(sim.counters.total, 1);
});
