// Soft purges over real sockets, with and without Redis: the old data is served once more,
// stale, while one refresh (one per fleet with Redis) brings the new data; a hard purge never serves stale.
import t from 'tap';
import { asWorkspaceId } from '../../../src/brands.js';
import { waitFor } from '../../helpers/redis.js';
import {
  PAGES,
  TOTAL,
  pagePath,
  recordingId,
  upstreamPage,
  upstreamRecording,
} from '../../helpers/purge-catalog.js';
import { REC, fleet, refetched, warm } from '../../helpers/purge-fleet-catalog.js';

for (const withRedis of [false, true]) {
  const mode = withRedis ? 'with Redis (two gateways)' : 'without Redis';

  void t.test(
    `${mode}: a soft purge serves stale once with one refresh, then new data fresh`,
    async (t) => {
      const f = await fleet(t, withRedis);
      await warm(f);
      f.catalog.change(12);
      await f.purge({ recording: recordingId(12), soft: true });
      for (const [index, gw] of f.gateways.entries()) {
        const path = `${REC}/${recordingId(12)}`;
        const stale = await gw.get(path);
        // Each instance holds its own copy, marked stale by the purge. Without Redis each refreshes
        // it once; with Redis the fleet asks the upstream once (the refresh takes the fetch lock)
        // and the other instances' refreshes find the new copy in L2.
        t.equal(stale.json().title, 'r12 v1', 'answered at once, with the old data');
        t.match(
          stale.headers['cache-status'],
          /^recgw; hit; ttl=-\d+$/,
          'labelled stale, not fresh',
        );
        t.equal(stale.headers['cache-control'], 'private, max-age=0', 'max-age 0');
        await waitFor(
          () => (f.catalog.counts().get(upstreamRecording(12)) ?? 0) >= (withRedis ? 1 : index + 1),
          5_000,
          'one refresh',
        );
        await waitFor(
          async () => (await gw.get(path)).json().title === 'r12 v2',
          5_000,
          'the refresh stored the new data',
        );
        const fresh = await gw.get(path);
        t.match(fresh.headers['cache-status'], /^recgw; hit; ttl=\d+$/, 'then fresh');
      }
      const page = await f.gateways[0]!.get(pagePath(3));
      t.match(page.headers['cache-status'], /ttl=-/, 'page 3 stale too');
      // One instance without Redis; with Redis the fleet's refreshes share one upstream fetch.
      t.equal(
        f.catalog.counts().get(upstreamRecording(12)),
        1,
        'one refresh of the recording for the whole fleet',
      );
      t.same(
        (await refetched(f)).filter((url) => url !== upstreamRecording(12)),
        [upstreamPage(3)],
        'and besides it only page 3, refreshed once',
      );
    },
  );

  void t.test(`${mode}: a hard purge never serves stale`, async (t) => {
    const f = await fleet(t, withRedis);
    await warm(f);
    f.catalog.change(12);
    await f.purge({ recording: recordingId(12) });
    for (const gw of f.gateways) {
      const reply = await gw.get(`${REC}/${recordingId(12)}`);
      t.equal(reply.json().title, 'r12 v2', 'new data at once');
      t.notMatch(reply.headers['cache-status'], /ttl=-/, 'never stale');
    }
  });

  void t.test(
    `${mode}: a soft workspace purge marks every entry stale, none dropped`,
    async (t) => {
      const f = await fleet(t, withRedis);
      await warm(f);
      const answer = await f.purge({ soft: true });
      t.equal(answer['matched'], TOTAL + PAGES, 'every page and recording');
      for (const [index, gw] of f.gateways.entries()) {
        // The second gateway drops its L1: what it reads then comes from Redis, marked there.
        if (index === 1) gw.app.generations.forget(asWorkspaceId('acme')!);
        // Paths the other gateway did not read (and so did not refresh, in Redis too).
        for (const path of [pagePath(1 + index), `${REC}/${recordingId(30 + index)}`])
          t.match(
            (await gw.get(path)).headers['cache-status'],
            /^recgw; hit; ttl=-/,
            `${path} stale (${index === 1 ? 'from Redis' : 'from L1'})`,
          );
      }
    },
  );
}
