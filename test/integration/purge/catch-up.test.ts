// Catch-up after a lost link costs the purges missed, not the workspaces known (case 3), and
// while the link is down an app stops trusting L1 after cache.purge.maxLag.
import t from 'tap';
import { asWorkspaceId } from '../../../src/brands.js';
import { isKnown } from '../../../src/cache/entry/keys.js';
import { startHeldUpstream } from '../../helpers/held-upstream.js';
import { servedFetch, startPurgeFleet } from '../../helpers/purge-fleet.js';
import { startPrivateRedis, waitFor } from '../../helpers/redis.js';
import { startRedisProxy } from '../../helpers/redis-proxy.js';
import { metric, purge } from '../../helpers/shared-gateways.js';
import type { TestGateway } from '../../helpers/gateway.js';

const R = '/api/external/v2/recordings';

void t.test(
  '10,000 known workspaces, link lost 1.5 s, 10 purged through another app meanwhile: 0 stale once back',
  async (t) => {
    const redis = await startPrivateRedis(t);
    const upstream = await startHeldUpstream(t, 1);
    const link = await startRedisProxy(t, redis.port);
    const [a] = (await startPurgeFleet(
      t,
      { url: link.url, keyPrefix: redis.keyPrefix },
      upstream,
      1,
    )) as [TestGateway];
    const [b] = (await startPurgeFleet(
      t,
      { url: redis.url, keyPrefix: redis.keyPrefix },
      upstream,
      1,
    )) as [TestGateway];
    const names = Array.from({ length: 10_000 }, (_, i) => `w${i}`);
    // A load that times out on a loaded host is retried after its back-off: the setup needs every
    // workspace known, however long the loads take; the bounds under test come after it.
    const unknown = (): string[] =>
      names.filter((name) => {
        const generation = a.app.generations.peek(asWorkspaceId(name)!);
        return generation === undefined || !isKnown(generation);
      });
    for (let round = 0; round < 30 && unknown().length > 0; round++) {
      if (round > 0) await new Promise((resolve) => setTimeout(resolve, 1_100));
      const missing = unknown();
      for (let i = 0; i < missing.length; i += 500) {
        await Promise.all(
          missing
            .slice(i, i + 500)
            .map(async (name) => a.app.tiers.generation(asWorkspaceId(name)!)),
        );
      }
    }
    t.equal(a.app.generations.size, 10_000, 'A holds the generation of 10,000 workspaces');
    const purged = names.slice(0, 10);
    const path = `${R}/${upstream.recordings[0]!.id}`;
    for (const workspace of purged) {
      t.ok((await servedFetch(a, path, workspace)) >= 0);
      t.match(
        (await a.get(path, { workspace, key: 'purge-test-key' })).headers['cache-status'],
        /^recgw; hit/,
      );
    }

    const cutAt = performance.now();
    link.cutLink();
    await waitFor(() => a.app.redis?.up === false, 2000, 'A to lose Redis');
    const from = upstream.nextFetch;
    for (const workspace of purged)
      t.equal((await purge(b, { workspace })).status, 200, `${workspace} purged through B`);
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, 1500 - (performance.now() - cutAt))),
    );
    const restoredAt = performance.now();
    link.restore();
    await waitFor(() => a.app.redis?.up === true, 10_000, 'A to reconnect');
    const reconnectedAt = performance.now();
    await waitFor(() => a.app.generations.syncedAt >= restoredAt, 10_000, 'A to catch up');
    const caughtUp = performance.now() - reconnectedAt;

    let stale = 0;
    for (const workspace of purged) if ((await servedFetch(a, path, workspace)) < from) stale++;
    t.equal(stale, 0, '0 of 10 purged workspaces stale on A');
    t.equal(
      await metric(a, 'recgw_purge_log_resets_total'),
      0,
      'the log reached back: nothing dropped beyond the 10',
    );
    t.ok(
      a.app.generations.size >= 9_990,
      `the other workspaces stay known (${a.app.generations.size})`,
    );
    t.comment(
      `knowing 10,000 workspaces, A reconnected ${(reconnectedAt - restoredAt).toFixed(0)} ms after the link came back (ioredis backoff) and caught up ${caughtUp.toFixed(0)} ms later`,
    );
  },
);

void t.test(
  'while an app cannot reach Redis, it obeys a purge made elsewhere within cache.purge.maxLag',
  async (t) => {
    const redis = await startPrivateRedis(t);
    const upstream = await startHeldUpstream(t, 1);
    const link = await startRedisProxy(t, redis.port);
    const config = { cache: { purge: { maxLag: '1s', pollInterval: '100ms' } } };
    const [a] = (await startPurgeFleet(
      t,
      { url: link.url, keyPrefix: redis.keyPrefix },
      upstream,
      1,
      config,
    )) as [TestGateway];
    const [b] = (await startPurgeFleet(
      t,
      { url: redis.url, keyPrefix: redis.keyPrefix },
      upstream,
      1,
      config,
    )) as [TestGateway];
    const path = `${R}/${upstream.recordings[0]!.id}`;
    const before = await servedFetch(a, path);
    t.equal(await servedFetch(a, path), before, 'an L1 hit');
    link.cutLink();
    await waitFor(() => a.app.redis?.up === false, 2000, 'A to lose Redis');
    const from = upstream.nextFetch;
    t.equal((await purge(b, { workspace: 'acme' })).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const during = await servedFetch(a, path);
    t.ok(
      during >= from,
      `still cut off, A no longer serves the purged entry (fetch ${during} ≥ ${from})`,
    );
    t.ok((await servedFetch(a, path)) >= from, 'nor anything fetched before the purge later on');
  },
);
