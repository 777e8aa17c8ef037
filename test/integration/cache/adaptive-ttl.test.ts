// Adaptive TTLs through the real flow: two apps on one Redis and one simulator, one fake clock.
// Data months old is kept for max; a body that just changed for min; each 304 lengthens the TTL,
// and an app that renews an entry another app stored starts from the same unchanged-since time,
// which only the L2 value carries.
import t from 'tap';
import { startSimulator } from '../../../src/sim/server.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { startPrivateRedis, waitFor } from '../../helpers/redis.js';
import { metricValue } from '../../helpers/redis-tier.js';

const R = '/api/external/v2/recordings';

/** The `ttl=` and whether it was a hit, from one read's Cache-Status. */
async function read(gw: TestGateway, id: string): Promise<string> {
  const reply = await gw.get(`${R}/${id}`);
  t.equal(reply.status, 200);
  const status = String(reply.headers['cache-status']);
  return `${/; hit/.test(status) ? 'hit' : 'miss'} ${/ttl=(-?\d+)/.exec(status)?.[1] ?? '-'}`;
}

/** Waits until `gw` has renewed `count` recordings by 304 in all. */
async function renewed(gw: TestGateway, count: number): Promise<void> {
  const labels = { resource: 'recording', outcome: 'not_modified' };
  await waitFor(
    async () =>
      (await metricValue(gw.app.metrics, 'recgw_upstream_requests_total', labels)) >= count,
    10_000,
    'the background refresh to come back 304',
  );
}

void t.test(
  'an entry’s TTL follows how long its data has stood still, on every instance',
  async (t) => {
    // Redis expires values by its own clock: start the fake one at the real time (a whole second,
    // so a change's Last-Modified is exactly the instant it was made).
    const clock = new FakeClock(Math.ceil(Date.now() / 1000) * 1000);
    const redis = await startPrivateRedis(t);
    const sim = await startSimulator({
      workspaces: ['acme'],
      recordingsPerWorkspace: 4,
      clock,
      urlLifetimeMs: 24 * 3600_000,
    });
    t.teardown(() => sim.close());
    const config = {
      cache: {
        redis: { keyPrefix: redis.keyPrefix, commandTimeout: '2s' },
        ttl: { adaptive: { enabled: true, min: '1s', max: '1h' } },
        staleWhileRevalidate: '1m',
        refreshAhead: false,
      },
    };
    const a = await startGateway(t, { sim, clock, redisUrl: redis.url, config });
    const b = await startGateway(t, { sim, clock, redisUrl: redis.url, config });
    const [still, busy, , other] = sim.data['acme']!.map((recording) => recording.id);
    // Each app has the workspace's generation and the key's verdict before the test begins.
    await read(a, other!);
    await read(b, other!);

    // Months unchanged (its Last-Modified): max, on the app that fetched it and the one reading L2.
    await read(a, still!);
    t.equal(await read(a, still!), 'hit 3600');
    t.equal(await read(b, still!), 'hit 3600', 'the other app reads the same entry from Redis');

    // Just changed: min.
    sim.changeRecording('acme', busy!);
    await read(a, busy!);
    t.equal(await read(a, busy!), 'hit 1');

    // 30 s on, unchanged: stale, refreshed in the background, 304: a tenth of 30 s.
    clock.advance(30_000);
    t.equal(await read(a, busy!), 'hit -29', 'served stale while it is revalidated');
    await renewed(a, 1);
    t.equal(await read(a, busy!), 'hit 3', 'lengthened by the 304');

    // App b takes the renewed entry from Redis, and 10 s on renews it itself: the unchanged-since
    // time it starts from came with the value from Redis.
    t.equal(await read(b, busy!), 'hit 3', 'the renewed entry, as app a stored it');
    clock.advance(10_000);
    t.equal(await read(b, busy!), 'hit -7');
    await renewed(b, 1);
    t.equal(await read(b, busy!), 'hit 4', 'a tenth of the 40 s since the change, not of 0');

    // Changed again: the next whole fetch (a purge makes it one) starts again from min.
    sim.changeRecording('acme', busy!);
    const since = performance.now();
    const purge = await a.admin('/admin/purge', {
      method: 'POST',
      body: JSON.stringify({ workspace: 'acme', recording: busy! }),
      headers: { authorization: 'Bearer test-admin-token', 'content-type': 'application/json' },
    });
    t.equal(purge.status, 200);
    await waitFor(() => b.app.generations.syncedAt >= since, 5000, 'b to see the purge');
    t.equal(await read(b, busy!), 'miss -', 'refetched after the purge');
    t.equal(await read(b, busy!), 'hit 1', 'fresh for min: its data just changed');
  },
);
