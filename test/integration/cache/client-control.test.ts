// Client-bounded freshness (cache.clientControl) over real sockets against the simulator.
// Invariants: an answer to max-age=N is at most N seconds old (N ≥ minRevalidate); no client,
// however many send no-cache, makes the gateway fetch one key more than once per minRevalidate;
// only-if-cached never reaches the upstream; with the switch off, Cache-Control changes nothing.
import t from 'tap';
import { Pool } from 'undici';
import { startGateway } from '../../helpers/gateway.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { getRedis, waitFor } from '../../helpers/redis.js';
import { startSimulator } from '../../../src/sim/server.js';

const R = '/api/external/v2/recordings';

const config = (enabled: boolean, minRevalidate = '1s') => ({
  cache: {
    ttl: { recording: '10m' },
    refreshAhead: false,
    clientControl: { enabled, minRevalidate },
  },
  signing: { minRemaining: '10m' },
  upstream: { timeouts: { connect: '10s', headers: '10s', body: '10s', deadline: '20s' } },
});

void t.test('max-age, min-fresh, no-cache on a fake clock', async (t) => {
  const clock = new FakeClock();
  const gw = await startGateway(t, {
    clock,
    simOptions: { workspaces: ['acme'], clock, urlLifetimeMs: 3600_000 },
    config: config(true),
  });
  const id = gw.sim.data['acme']![0]!.id;
  const path = `${R}/${id}`;
  const upstream = () => gw.sim.counters.byWorkspace('acme');
  const get = (cc?: string) =>
    gw.get(path, cc === undefined ? {} : { headers: { 'cache-control': cc } });

  t.equal((await get()).status, 200);
  t.equal(upstream(), 1, 'the miss');
  clock.advance(5000);
  let res = await get('max-age=10');
  t.equal(res.headers['age'], '5', 'within max-age: served from the cache');
  t.match(res.headers['cache-status'], /^recgw; hit/);
  res = await get('max-age=3');
  t.equal(res.headers['age'], '0', 'past max-age: revalidated first');
  t.equal(upstream(), 2);
  t.equal(gw.sim.counters.notModified, 1, 'conditionally: a 304 renewed it');
  t.match(res.headers['cache-status'], /fwd=request/);

  clock.advance(500);
  res = await get('no-cache');
  t.equal(upstream(), 2, 'no-cache within minRevalidate of the last fetch: the cache answers');
  clock.advance(600);
  res = await get('no-cache');
  t.equal(upstream(), 3, 'no-cache past minRevalidate: revalidated');
  t.equal(res.headers['age'], '0');

  // Fresh for 10 minutes from the last fetch: min-fresh asks for more than is left.
  clock.advance(2000);
  res = await get('min-fresh=599');
  t.equal(upstream(), 4, 'min-fresh beyond what is left: revalidated');
  res = await get('min-fresh=10');
  t.equal(upstream(), 4, 'min-fresh within what is left: the cache answers');
  t.equal((await get('max-age=oops, no-transform')).status, 200, 'bad values are ignored');
  t.equal(upstream(), 4);
});

void t.test('only-if-cached: 504 NOT_CACHED without an upstream request', async (t) => {
  const gw = await startGateway(t, {
    simOptions: { workspaces: ['acme'], urlLifetimeMs: 3600_000 },
    config: config(true),
  });
  const [first, second] = gw.sim.data['acme']!;
  // The key verified first: an unverified key is not answered from the cache either way.
  t.equal((await gw.get(`${R}/${first!.id}`)).status, 200);
  const before = gw.sim.counters.byWorkspace('acme');
  const missing = await gw.get(`${R}/${second!.id}`, {
    headers: { 'cache-control': 'only-if-cached' },
  });
  t.equal(missing.status, 504);
  t.same(missing.json(), {
    error: 'Cache-Control only-if-cached: nothing cached may answer this request',
    code: 'NOT_CACHED',
  });
  const cached = await gw.get(`${R}/${first!.id}`, {
    headers: { 'cache-control': 'only-if-cached' },
  });
  t.equal(cached.status, 200, 'a cached entry answers');
  t.equal(gw.sim.counters.byWorkspace('acme'), before, 'no upstream request');
  const unknownKey = await gw.get(`${R}/${first!.id}`, {
    key: 'sim-acme-key-2',
    headers: { 'cache-control': 'only-if-cached' },
  });
  t.equal(unknownKey.status, 504, 'a key not yet verified cannot be answered from the cache');
  t.equal(gw.sim.counters.byWorkspace('acme'), before, 'still no upstream request');
});

void t.test(
  'a no-cache storm on one key: at most one upstream request per minRevalidate',
  async (t) => {
    const minRevalidate = 300;
    const gw = await startGateway(t, {
      simOptions: { workspaces: ['acme'], urlLifetimeMs: 3600_000 },
      config: config(true, `${minRevalidate}ms`),
    });
    const id = gw.sim.data['acme']![0]!.id;
    const pool = new Pool(`http://127.0.0.1:${gw.port}`, { connections: 16 });
    t.teardown(() => pool.close());
    const requests = 3000;
    let sent = 0;
    let ok = 0;
    const client = async (): Promise<void> => {
      while (sent < requests) {
        sent++;
        const res = await pool.request({
          path: `${R}/${id}`,
          method: 'GET',
          headers: {
            host: `acme.localhost:${gw.port}`,
            'x-api-key': gw.key(),
            'cache-control': 'no-cache',
          },
        });
        await res.body.dump();
        if (res.statusCode === 200) ok++;
      }
    };
    const started = Date.now();
    await Promise.all(Array.from({ length: 16 }, client));
    const elapsed = Date.now() - started;
    t.equal(ok, requests, 'every request answered');
    const arrivals = gw.sim.counters.requests.filter((r) => r.id === id).map((r) => r.at);
    // A fetch stores its answer after it arrived upstream; the next starts minRevalidate later.
    const gaps = arrivals.slice(1).map((at, i) => at - arrivals[i]!);
    t.comment(
      `${requests} requests in ${elapsed} ms, ${arrivals.length} upstream, smallest gap ${Math.min(...gaps)} ms`,
    );
    t.ok(
      gaps.every((gap) => gap >= minRevalidate),
      'consecutive upstream requests for the key at least minRevalidate apart',
    );
    t.ok(arrivals.length >= 2, 'the storm did revalidate');
  },
);

void t.test('off: a request Cache-Control changes nothing', async (t) => {
  const gw = await startGateway(t, {
    simOptions: { workspaces: ['acme'], urlLifetimeMs: 3600_000 },
    config: config(false),
  });
  const id = gw.sim.data['acme']![0]!.id;
  const plain = await gw.get(`${R}/${id}`);
  t.equal(plain.status, 200);
  for (const cc of ['no-cache', 'max-age=0', 'min-fresh=100000', 'only-if-cached']) {
    const res = await gw.get(`${R}/${id}`, { headers: { 'cache-control': cc } });
    t.equal(res.status, 200, cc);
    t.match(res.headers['cache-status'], /^recgw; hit; ttl=\d+$/, `${cc}: a hit as without it`);
  }
  const other = gw.sim.data['acme']![1]!.id;
  const miss = await gw.get(`${R}/${other}`, { headers: { 'cache-control': 'only-if-cached' } });
  t.equal(miss.status, 200, 'only-if-cached ignored: fetched as usual');
  t.equal(gw.sim.counters.byWorkspace('acme'), 2);
});

void t.test('a no-cache storm over two instances sharing Redis and the fetch lock', async (t) => {
  const minRevalidate = 300;
  const redis = await getRedis(t);
  const sim = await startSimulator({ workspaces: ['acme'], urlLifetimeMs: 3600_000 });
  t.teardown(() => sim.close());
  const options = {
    sim,
    redisUrl: redis.url,
    config: {
      ...config(true, `${minRevalidate}ms`),
      cache: {
        ...config(true, `${minRevalidate}ms`).cache,
        redis: { keyPrefix: redis.keyPrefix },
        distributedLock: { enabled: true },
      },
    },
  };
  const gateways = [await startGateway(t, options), await startGateway(t, options)];
  await waitFor(
    () => gateways.every((gw) => gw.app.redis?.up === true),
    10_000,
    'both apps connected to Redis',
  );
  const id = sim.data['acme']![0]!.id;
  // Each instance verifies the key and holds the entry first.
  for (const gw of gateways) t.equal((await gw.get(`${R}/${id}`)).status, 200);
  const before = sim.counters.requests.length;
  const storm = async (gw: (typeof gateways)[number]): Promise<void> => {
    const pool = new Pool(`http://127.0.0.1:${gw.port}`, { connections: 8 });
    try {
      // Long enough for several minRevalidate windows however fast the host answers.
      for (const until = Date.now() + 5 * minRevalidate; Date.now() < until;)
        await Promise.all(
          Array.from({ length: 8 }, async () => {
            const res = await pool.request({
              path: `${R}/${id}`,
              method: 'GET',
              headers: {
                host: `acme.localhost:${gw.port}`,
                'x-api-key': gw.key(),
                'cache-control': 'no-cache',
              },
            });
            await res.body.dump();
            if (res.statusCode !== 200) t.fail(`status ${res.statusCode}`);
          }),
        );
    } finally {
      await pool.close();
    }
  };
  await Promise.all(gateways.map(storm));
  const arrivals = sim.counters.requests
    .slice(before)
    .filter((r) => r.id === id)
    .map((r) => r.at);
  const gaps = arrivals.slice(1).map((at, i) => at - arrivals[i]!);
  t.comment(`${arrivals.length} upstream requests, gaps ${gaps.join(', ')} ms`);
  t.ok(
    gaps.every((gap) => gap >= minRevalidate),
    'fleet-wide, consecutive upstream requests for the key at least minRevalidate apart',
  );
  t.ok(arrivals.length >= 2, 'the storm did revalidate');
});

void t.test('a revalidation a client asks for counts against its key quota', async (t) => {
  const gw = await startGateway(t, {
    simOptions: { workspaces: ['acme'], urlLifetimeMs: 3600_000 },
    config: { ...config(true, '100ms'), limits: { perKey: { requests: 3, window: '1h' } } },
  });
  const path = `${R}/${gw.sim.data['acme']![0]!.id}`;
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) {
    statuses.push((await gw.get(path, { headers: { 'cache-control': 'no-cache' } })).status);
    // Past minRevalidate: each request revalidates.
    await new Promise((resolve) => setTimeout(resolve, 120));
  }
  t.same(statuses, [200, 200, 200, 429], 'the fourth request is over the quota');
  t.equal(gw.sim.counters.byWorkspace('acme'), 3, 'and is not sent upstream');
});
