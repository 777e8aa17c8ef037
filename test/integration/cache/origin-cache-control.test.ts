// upstream.cacheControl honor over real sockets: the simulator sends a Cache-Control with every
// answer; no-store keeps answers out of both tiers (a real Redis), max-age and s-maxage cap the
// TTL. One fake clock drives gateway and simulator, so freshness is counted, not waited for.
import t from 'tap';
import { Redis } from 'ioredis';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { startPrivateRedis, waitFor } from '../../helpers/redis.js';

const R = '/api/external/v2/recordings';

async function gateway(
  t: { teardown(fn: () => unknown): void },
  cacheControl: string,
  mode: 'honor' | 'ignore',
  redisUrl?: string,
): Promise<{ gw: TestGateway; clock: FakeClock; path: string }> {
  const clock = new FakeClock();
  const gw = await startGateway(t, {
    clock,
    ...(redisUrl === undefined ? {} : { redisUrl }),
    simOptions: {
      workspaces: ['acme'],
      recordingsPerWorkspace: 3,
      cacheControl,
      clock,
      urlLifetimeMs: 24 * 3600_000,
    },
    config: {
      upstream: { cacheControl: mode },
      cache: { ttl: { recording: '1m' }, staleWhileRevalidate: '0s', refreshAhead: false },
    },
  });
  return { gw, clock, path: `${R}/${gw.sim.data['acme']![0]!.id}` };
}

void t.test(
  'honor, no-store: every request is answered, nothing is stored in L1 or Redis',
  async (t) => {
    const redis = await startPrivateRedis(t);
    const { gw, path } = await gateway(t, 'no-store', 'honor', redis.url);
    await waitFor(() => gw.app.redis?.up === true, 10_000, 'Redis connected');
    const first = await gw.get(path);
    const second = await gw.get(path);
    t.equal(first.status, 200);
    t.equal(second.text, first.text, 'answered alike');
    t.equal(gw.sim.counters.total, 2, 'each request went upstream: nothing was kept');
    t.equal(
      second.headers['cache-status'],
      'recgw; fwd=uri-miss; fwd-status=200; detail=cold',
      'a miss, not stored',
    );
    t.equal(second.headers['cache-control'], 'private, max-age=0');
    const raw = new Redis(redis.url);
    t.teardown(() => raw.quit());
    // The same gateway with ignore writes its entry to Redis (below): give a write time to land.
    await new Promise((resolve) => setTimeout(resolve, 200));
    t.same(await entryKeys(raw, 'recgw'), [], 'no entry in Redis');
  },
);

/** Keys of cached values (entries and aliases) under the gateway's prefix: not verdicts or purge state. */
async function entryKeys(raw: Redis, prefix: string): Promise<string[]> {
  const keys = await raw.keys(`${prefix}*`);
  return keys.filter((key) => /:[ucl]:/.test(key));
}

void t.test(
  'ignore, no-store: the configured TTL decides, and Redis holds the entry',
  async (t) => {
    const redis = await startPrivateRedis(t);
    const { gw, path } = await gateway(t, 'no-store', 'ignore', redis.url);
    await waitFor(() => gw.app.redis?.up === true, 10_000, 'Redis connected');
    await gw.get(path);
    const second = await gw.get(path);
    t.equal(gw.sim.counters.total, 1, 'the second request was a hit');
    t.match(second.headers['cache-status'], /^recgw; hit; ttl=/);
    const raw = new Redis(redis.url);
    t.teardown(() => raw.quit());
    await waitFor(
      async () => (await entryKeys(raw, 'recgw')).length > 0,
      5000,
      'the entry written to Redis',
    );
    t.pass('stored in Redis');
  },
);

void t.test('honor, max-age below the TTL: fresh for max-age only', async (t) => {
  for (const [cacheControl, seconds] of [
    ['max-age=5', 5],
    ['max-age=60, s-maxage=3', 3],
  ] as const) {
    const { gw, clock, path } = await gateway(t, cacheControl, 'honor');
    const miss = await gw.get(path);
    t.equal(miss.headers['cache-control'], `private, max-age=${seconds}`, cacheControl);
    clock.advance(seconds * 1000 - 1000);
    const hit = await gw.get(path);
    t.match(hit.headers['cache-status'], /^recgw; hit; ttl=\d+$/, `${cacheControl}: still a hit`);
    t.equal(gw.sim.counters.total, 1);
    clock.advance(2000);
    const after = await gw.get(path);
    t.equal(gw.sim.counters.total, 2, `${cacheControl}: past max-age the upstream is asked again`);
    t.equal(after.status, 200);
  }
});
