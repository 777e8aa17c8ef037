// Case 2: Redis evicting any key (allkeys-lru, allkeys-lfu, maxmemory 2mb, steady writes from
// elsewhere) never brings a purged value back on an app that was running nor on one started
// after, and never turns a later purge into a no-op. Also: the policy is logged and exported.
import t from 'tap';
import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { startHeldUpstream } from '../../helpers/held-upstream.js';
import { servedFetch, startPurgeFleet } from '../../helpers/purge-fleet.js';
import { freePort, spawnRedisServer, stopProcess } from '../../helpers/redis.js';
import { metric, purge } from '../../helpers/shared-gateways.js';
import type { TestGateway } from '../../helpers/gateway.js';

const R = '/api/external/v2/recordings';
const WORKSPACES = ['e0', 'e1', 'e2', 'e3', 'e4', 'e5'];
const ROUNDS = 4;

for (const policy of ['allkeys-lru', 'allkeys-lfu']) {
  void t.test(
    `${policy}, maxmemory 2mb, steady writes: no app, old or new, serves a purged value; every purge takes effect`,
    async (t) => {
      const port = await freePort();
      const child = await spawnRedisServer(port, [
        '--maxmemory',
        '2mb',
        '--maxmemory-policy',
        policy,
      ]);
      t.teardown(() => stopProcess(child));
      const redis = { url: `redis://127.0.0.1:${port}`, keyPrefix: 'evict' };
      const upstream = await startHeldUpstream(t, 3);
      const [a] = (await startPurgeFleet(t, redis, upstream, 1)) as [TestGateway];
      await new Promise((resolve) => setTimeout(resolve, 100));
      t.equal(
        await metric(a, 'recgw_redis_maxmemory_policy_info', { policy }),
        1,
        'the policy is exported',
      );
      t.ok(
        a.logs
          .lines()
          .some(
            (line) =>
              line['msg'] === 'redis maxmemory-policy' &&
              line['policy'] === policy &&
              line['level'] === 40,
          ),
        'and logged as a warning',
      );

      // Steady writes from another client: 20 KB every 5 ms, ten times the memory in a few seconds.
      const raw = new Redis(redis.url);
      t.teardown(() => raw.quit());
      let writing = true;
      const filler = (async () => {
        for (let n = 0; writing; n++) {
          await raw.set(`filler:${n}`, 'x'.repeat(20_000)).catch(() => {});
          await sleep(5);
        }
      })();
      const paths = [
        ...upstream.recordings.flatMap((r) => [`${R}/${r.id}`, `${R}/${r.link}`]),
        `${R}?page_size=3`,
      ];
      const covered = (round: number, path: string): boolean =>
        round % 2 === 0 ||
        path.includes(upstream.recordings[0]!.id) ||
        path.includes(upstream.recordings[0]!.link) ||
        path.includes('page_size');
      let stale = 0;
      let checked = 0;
      let lostHashes = 0;
      for (let round = 0; round < ROUNDS; round++) {
        for (const ws of WORKSPACES) for (const path of paths) await servedFetch(a, path, ws);
        await sleep(300);
        lostHashes += (
          await Promise.all(WORKSPACES.map((ws) => raw.exists(`evict:{${ws}}:gen`)))
        ).filter((n) => n === 0).length;
        const from = upstream.nextFetch;
        for (const ws of WORKSPACES) {
          const body =
            round % 2 === 0
              ? { workspace: ws }
              : { workspace: ws, recording: upstream.recordings[0]!.id };
          t.equal((await purge(a, body)).status, 200, `round ${round}: ${ws} purged`);
        }
        await sleep(300);
        // An app started now reads purge state that eviction may have taken.
        const [fresh] = (await startPurgeFleet(t, redis, upstream, 1)) as [TestGateway];
        for (const gw of [a, fresh]) {
          for (const ws of WORKSPACES) {
            for (const path of paths) {
              const fetch = await servedFetch(gw, path, ws);
              if (!covered(round, path)) continue;
              checked++;
              if (fetch < from) stale++;
            }
          }
        }
      }
      writing = false;
      await filler;
      const info = await raw.info('stats');
      const evicted = Number(/evicted_keys:(\d+)/.exec(info)?.[1] ?? 0);
      t.ok(evicted > 100, `Redis evicted ${evicted} keys meanwhile`);
      t.comment(
        `${policy}: ${lostHashes} generation hashes found evicted before a purge; purge log lost ${await metric(a, 'recgw_purge_log_resets_total')} times under the running app`,
      );
      t.equal(
        stale,
        0,
        `0 of ${checked} reads after a purge served a value fetched before it (old and new apps)`,
      );
    },
  );
}
