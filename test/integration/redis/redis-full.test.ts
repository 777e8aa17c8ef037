// A full Redis (maxmemory + noeviction) is not a down one: refused writes are counted, reads keep
// being served from L2, /readyz says "full", recgw_redis_up stays 1, and a purge answers 503.
import t from 'tap';
import { Redis } from 'ioredis';
import { startSharedGateways, purge, upstreamPath } from '../../helpers/shared-gateways.js';
import { startPrivateRedis, waitFor } from '../../helpers/redis.js';
import { metricSample } from '../faults/fault-fixture.js';

void t.test('refused writes do not open the breaker; reads keep coming from L2', async (t) => {
  const redis = await startPrivateRedis(t);
  const raw = new Redis(redis.url);
  t.teardown(() => raw.quit());
  await raw.config('SET', 'maxmemory-policy', 'noeviction');
  const { sim, gateways } = await startSharedGateways(
    t,
    { url: redis.url, keyPrefix: redis.keyPrefix },
    { config: { cache: { redis: { commandTimeout: '200ms' } } } },
  );
  const [a, b] = gateways;
  const warm = sim.data['acme']!.slice(0, 3);
  for (const recording of warm)
    t.equal((await a.get(`/api/external/v2/recordings/${recording.id}`)).status, 200);
  // Wait for A's writes to land (they are not awaited by the request), then fill Redis up.
  // (Redis also holds the purge log and the workspace's generation hash: count the entries themselves.)
  await waitFor(
    async () =>
      (await Promise.all(warm.map(async (r) => (await raw.keys(`*:u:${r.id}`)).length))).every(
        (n) => n > 0,
      ),
    3000,
    'warmed entries in Redis',
  );
  await raw.set('filler', Buffer.alloc(2 * 1024 * 1024));
  await raw.config('SET', 'maxmemory', '1mb');

  // Cold recordings through A: each tries to write L2 and is refused; far more than the breaker's 3.
  const cold = sim.data['acme']!.slice(10, 20);
  for (const recording of cold)
    t.equal(
      (await a.get(`/api/external/v2/recordings/${recording.id}`)).status,
      200,
      'a miss is still answered',
    );
  await waitFor(
    async () => ((await metricSample(a, 'recgw_redis_full_total', 'op="set"')) ?? 0) >= 3,
    3000,
    'refused writes counted',
  );
  t.ok(
    ((await metricSample(a, 'recgw_redis_errors_total', 'op="set"')) ?? 0) >= 3,
    'and counted as errors of their op',
  );
  t.equal(await metricSample(a, 'recgw_redis_up'), 1, 'recgw_redis_up stays 1');
  t.same(
    (await a.admin('/readyz')).json(),
    { status: 'degraded', redis: 'full' },
    '/readyz tells full from down',
  );

  // Reads still answer: B has nothing in L1 and gets A's warmed entries from Redis, not the upstream.
  const before = sim.counters.total;
  for (const recording of warm) {
    const reply = await b.get(`/api/external/v2/recordings/${recording.id}`);
    t.equal(reply.status, 200);
    t.match(reply.headers['cache-status'], /hit/, `${recording.id} served from L2`);
  }
  t.equal(sim.counters.total, before, 'no upstream call: the read path was never cut off');
  t.equal(sim.counters.byPath(upstreamPath(warm[0]!.id)), 1);

  const refused = await purge(a, { workspace: 'acme' });
  t.equal(refused.status, 503, 'a purge Redis cannot record still answers 503');
  t.equal(refused.json().code, 'PURGE_UNAVAILABLE');
  t.equal(await metricSample(a, 'recgw_redis_up'), 1, 'and leaves Redis up for reads');
});
