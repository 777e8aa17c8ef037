// Case 4: Redis stalling for 300 ms while an app loads a workspace's generation for the first
// time: the app serves nothing fetched before the workspace's last purge, during the stall or after.
import t from 'tap';
import { startHeldUpstream } from '../../helpers/held-upstream.js';
import { servedFetch, startPurgeFleet } from '../../helpers/purge-fleet.js';
import { startPrivateRedis } from '../../helpers/redis.js';
import type { TestGateway } from '../../helpers/gateway.js';

const R = '/api/external/v2/recordings';

void t.test(
  "a 300 ms Redis stall on an app's first load of a workspace serves no pre-purge data",
  async (t) => {
    const redis = await startPrivateRedis(t);
    const upstream = await startHeldUpstream(t, 6);
    const [b, a] = (await startPurgeFleet(t, redis, upstream, 2)) as [TestGateway, TestGateway];
    const paths = upstream.recordings.flatMap((r) => [`${R}/${r.id}`, `${R}/${r.link}`]);
    // B caches every recording in Redis, then the workspace is purged.
    for (const path of paths) await servedFetch(b, path);
    const from = upstream.nextFetch;
    const purged = await b.admin('/admin/purge', {
      method: 'POST',
      body: '{"workspace":"acme"}',
      headers: { authorization: 'Bearer test-admin-token', 'content-type': 'application/json' },
    });
    t.equal(purged.status, 200);

    // A has never seen the workspace; its first requests meet a stalled Redis.
    redis.pause();
    const stalledAt = performance.now();
    let stale = 0;
    for (const path of paths) if ((await servedFetch(a, path)) < from) stale++;
    const stalledFor = performance.now() - stalledAt;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 300 - stalledFor)));
    redis.resume();
    t.equal(stale, 0, `0 of ${paths.length} answers during the stall came from before the purge`);
    // After the stall, and once the failed load is retried (1 s later), still nothing older.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    for (const path of paths) if ((await servedFetch(a, path)) < from) stale++;
    t.equal(stale, 0, 'nor after it');
  },
);
