// An exact purge made after Redis lost a workspace's generation hash (evicted, flushed) and drew
// new tokens for it reaches an app that still holds the old tokens: that app stops trusting its
// L1 and its old names in Redis, which the purge, made under the new tokens, never touched.
// Found by purge-model (an app cut off while the hash was deleted and a recording purged).
import t from 'tap';
import { Redis } from 'ioredis';
import type { WorkspaceId } from '../../../src/brands.js';
import { generationKey, purgeChannel, purgeLogKey } from '../../../src/redis/key-layout.js';
import { startHeldUpstream } from '../../helpers/held-upstream.js';
import { servedFetch, startPurgeFleet } from '../../helpers/purge-fleet.js';
import { getRedis, waitFor } from '../../helpers/redis.js';
import type { TestGateway } from '../../helpers/gateway.js';

const R = '/api/external/v2/recordings';

for (const by of ['id', 'link'] as const) {
  void t.test(
    `purged by ${by === 'id' ? 'UUID' : 'link code'} under new tokens: an app on the old ones serves nothing fetched before`,
    async (t) => {
      const redis = await getRedis(t);
      const upstream = await startHeldUpstream(t, 2);
      const [a, b] = (await startPurgeFleet(t, redis, upstream)) as [TestGateway, TestGateway];
      const raw = new Redis(redis.url);
      t.teardown(() => raw.quit());
      const recording = upstream.recordings[0]!;
      const paths = [`${R}/${recording.id}`, `${R}/${recording.link}`];

      // B fetches the recording and stores it in its L1 and, under the tokens it holds, in Redis.
      const before = await servedFetch(b, paths[0]!);
      t.ok(before >= 0, 'B fetched it');
      await waitFor(
        async () => (await raw.keys(`${redis.keyPrefix}*${recording.id}`)).length > 0,
        5000,
        'the value in Redis',
      );

      // Redis loses the generation hash; A's next load draws new tokens. B still holds the old.
      await raw.del(generationKey(redis.keyPrefix, 'acme' as WorkspaceId));
      t.equal((await servedFetch(a, `${R}/${upstream.recordings[1]!.id}`)) >= 0, true, 'A reloads');
      // The premise: the two apps now build names from different tokens.
      const acme = 'acme' as WorkspaceId;
      const [heldByA, heldByB] = [a.app.generations.peek(acme), b.app.generations.peek(acme)];
      t.ok(heldByA !== undefined && heldByB !== undefined, 'both apps hold a generation');
      t.not(
        `${heldByA?.all}/${heldByA?.list}`,
        `${heldByB?.all}/${heldByB?.list}`,
        "A's new tokens differ from the ones B still holds",
      );

      const required = upstream.nextFetch;
      const since = performance.now();
      const purge = await a.admin('/admin/purge', {
        method: 'POST',
        body: JSON.stringify({ workspace: 'acme', recording: recording[by] }),
        headers: { authorization: 'Bearer test-admin-token', 'content-type': 'application/json' },
      });
      t.equal(purge.status, 200, 'the purge answered');
      await waitFor(() => b.app.generations.syncedAt >= since, 5000, 'B read the purge log');

      for (const app of [b, a])
        for (const path of paths) {
          const served = await servedFetch(app, path);
          t.ok(
            served >= required,
            `${app === a ? 'A' : 'B'} ${path}: fetch ${served}, purged: only fetches from ${required} on`,
          );
        }
    },
  );
}

void t.test(
  'an exact purge entry without its tokens (an older release wrote it) forgets the workspace',
  async (t) => {
    const redis = await getRedis(t);
    const upstream = await startHeldUpstream(t, 1);
    const [a] = (await startPurgeFleet(t, redis, upstream, 1)) as [TestGateway];
    const raw = new Redis(redis.url);
    t.teardown(() => raw.quit());
    const acme = 'acme' as WorkspaceId;
    await servedFetch(a, `${R}/${upstream.recordings[0]!.id}`);
    const held = a.app.generations.peek(acme);
    t.ok(held, 'A holds the generation');
    // The entry as the release before the tokens wrote it: rev, selectors, keys and mode only.
    const log = purgeLogKey(redis.keyPrefix);
    const tip = await raw.xrevrange(log, '+', '-', 'COUNT', 1);
    const since = performance.now();
    const id = await raw.xadd(
      log,
      '*',
      'w',
      'acme',
      'p',
      tip[0]?.[0] ?? '0-0',
      'v',
      '12345',
      'x',
      'r:x',
      'k',
      '',
      's',
      '0',
    );
    await raw.publish(purgeChannel(redis.keyPrefix), id!);
    await waitFor(() => a.app.generations.syncedAt >= since, 5000, 'A read the log');
    t.equal(a.app.generations.peek(acme), undefined, 'forgotten: the next request reloads');
  },
);
