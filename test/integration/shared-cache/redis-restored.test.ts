// Redis restarted without its data: entries still in an instance's L1 are written back on their first hit.
import t from 'tap';
import { asWorkspaceId } from '../../../src/brands.js';
import { recordingKey } from '../../../src/cache/keys.js';
import { startSimulator } from '../../../src/sim/server.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { startPrivateRedis, waitFor, type PrivateRedis } from '../../helpers/redis.js';
import { startSharedGateways, waitShared } from '../../helpers/shared-gateways.js';

const LIST = '/api/external/v2/recordings';
/** Write-back starts half a second after the reconnect (once generations are reloaded); a margin on top. */
const REWARM_START_MS = 700;

/** Kills Redis (its data goes with it), starts it again and waits until both apps are back on it. */
async function restartEmpty(redis: PrivateRedis, a: TestGateway, b: TestGateway): Promise<void> {
  await redis.stop();
  await waitFor(() => !a.app.l2!.up && !b.app.l2!.up, 10_000, 'both apps to notice Redis is gone');
  await redis.start();
  await waitFor(() => a.app.l2!.up && b.app.l2!.up, 10_000, 'both apps reconnected');
  await new Promise((resolve) => setTimeout(resolve, REWARM_START_MS));
}

/** Waits until B can read the recording from Redis (A's write-back is not awaited by A's answer). */
async function writtenBack(b: TestGateway, id: string): Promise<void> {
  const workspace = asWorkspaceId('acme')!;
  const generation = await b.app.readThrough.generation(workspace);
  await waitFor(async () => (await b.app.l2!.get(workspace, generation, recordingKey(id))) !== undefined, 3000, 'the entry A wrote back');
}

void t.test('after Redis comes back empty, an L1 hit refills L2 for the other instances', async (t) => {
  const redis = await startPrivateRedis(t);
  const { sim, gateways } = await startSharedGateways(t, redis);
  const [a, b] = gateways;
  const id = sim.data['acme']![3]!.id;
  t.equal((await a.get(`${LIST}/${id}`)).status, 200, 'cached by A in L1 and L2');
  // Verify B's key first, so B's later request can be answered from L2.
  await b.get(`${LIST}?page_number=7&page_size=1`);

  await restartEmpty(redis, a, b);
  const hit = await a.get(`${LIST}/${id}`);
  t.match(hit.headers['cache-status'], /^recgw; hit/, 'A answers from its L1');
  await writtenBack(b, id);
  const before = sim.counters.total;
  const fromB = await b.get(`${LIST}/${id}`);
  t.match(fromB.headers['cache-status'], /^recgw; hit/, 'B answers from L2');
  t.equal(sim.counters.total, before, 'B was answered from L2, not the upstream');
});

void t.test('a workspace whose TTL is longer than the global ones is written back for as long as its entries last', async (t) => {
  const clock = new FakeClock();
  const redis = await startPrivateRedis(t);
  // URLs valid for hours: the recording's freshness is its TTL, not its URLs' expiry.
  const sim = await startSimulator({ clock, urlLifetimeMs: 4 * 3_600_000 });
  t.teardown(() => sim.close());
  const config = {
    cache: { ttl: { list: '10s', recording: '10s', notFound: '10s' }, staleWhileRevalidate: '0s', staleIfError: '0s', redis: { keyPrefix: redis.keyPrefix } },
    workspaces: { acme: { ttl: { recording: '10m' } } },
  };
  const a = await startGateway(t, { sim, clock, config, redisUrl: redis.url });
  const b = await startGateway(t, { sim, clock, config, redisUrl: redis.url });
  await waitShared({ sim, gateways: [a, b] }, redis);
  const id = sim.data['acme']![3]!.id;
  t.equal((await a.get(`${LIST}/${id}`)).status, 200, 'cached by A for 10 minutes');
  await b.get(`${LIST}?page_number=7&page_size=1`);
  clock.advance(1000);

  await restartEmpty(redis, a, b);
  // Past every global TTL and stale window (what a window sized from them allowed), within acme's own TTL.
  clock.advance(20_000);
  t.match((await a.get(`${LIST}/${id}`)).headers['cache-status'], /^recgw; hit/, 'A answers from its L1');
  await writtenBack(b, id);
  const before = sim.counters.total;
  t.match((await b.get(`${LIST}/${id}`)).headers['cache-status'], /^recgw; hit/, 'B answers from L2');
  t.equal(sim.counters.total, before, 'B was answered from L2, not the upstream');
});
