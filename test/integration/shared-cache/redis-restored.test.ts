// Redis restarted without its data: entries still in an instance's L1 are written back on their first hit.
import t from 'tap';
import { asWorkspaceId } from '../../../src/brands.js';
import { recordingKey } from '../../../src/cache/keys.js';
import { startPrivateRedis, waitFor } from '../../helpers/redis.js';
import { startSharedGateways } from '../../helpers/shared-gateways.js';

const LIST = '/api/external/v2/recordings';

void t.test('after Redis comes back empty, an L1 hit refills L2 for the other instances', async (t) => {
  const redis = await startPrivateRedis(t);
  const { sim, gateways } = await startSharedGateways(t, redis);
  const [a, b] = gateways;
  const id = sim.data['acme']![3]!.id;
  t.equal((await a.get(`${LIST}/${id}`)).status, 200, 'cached by A in L1 and L2');
  // Verify B's key first, so B's later request can be answered from L2.
  await b.get(`${LIST}?page_number=7&page_size=1`);

  await redis.stop();
  await waitFor(() => !a.app.l2!.up && !b.app.l2!.up, 10_000, 'both apps to notice Redis is gone');
  await redis.start(); // no persistence: Redis comes back empty
  await waitFor(() => a.app.l2!.up && b.app.l2!.up, 10_000, 'both apps reconnected');
  await b.get(`${LIST}?page_number=7&page_size=1`); // B re-verifies its key into the empty Redis
  // The write-back window opens half a second after the reconnect, once generations are reloaded.
  await new Promise((resolve) => setTimeout(resolve, 700));

  const hit = await a.get(`${LIST}/${id}`);
  t.match(hit.headers['cache-status'], /^recgw; hit/, 'A answers from its L1');
  // The write-back is not awaited by A's answer: wait until it has landed in Redis.
  const workspace = asWorkspaceId('acme')!;
  const generation = await b.app.readThrough.generation(workspace);
  await waitFor(async () => (await b.app.l2!.get(workspace, generation, recordingKey(id))) !== undefined, 3000, 'the entry A wrote back');
  const before = sim.counters.total;
  const fromB = await b.get(`${LIST}/${id}`);
  t.match(fromB.headers['cache-status'], /^recgw; hit/, 'B answers from L2');
  t.equal(sim.counters.total, before, 'B was answered from L2, not the upstream');
});
