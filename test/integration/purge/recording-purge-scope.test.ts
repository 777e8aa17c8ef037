// What a recording purge covers is the same with and without Redis: the recording under every name
// (UUID, link code) and the list pages (they may hold it), nothing else. Without Redis it used to
// forget the whole workspace, so every other recording went back to the upstream.
import t from 'tap';
import { asWorkspaceId } from '../../../src/brands.js';
import { startGateway } from '../../helpers/gateway.js';
import { getRedis, waitFor } from '../../helpers/redis.js';

const LIST = '/api/external/v2/recordings';

for (const withRedis of [false, true]) {
  void t.test(
    `${withRedis ? 'with' : 'without'} Redis: a recording purge covers that recording and the list pages, not the other recordings`,
    async (t) => {
      const redis = withRedis ? await getRedis(t) : undefined;
      const gw = await startGateway(t, {
        ...(redis === undefined
          ? { redis: null }
          : {
              redisUrl: redis.url,
              config: { cache: { redis: { keyPrefix: redis.keyPrefix } } },
            }),
      });
      if (withRedis) await waitFor(() => gw.app.redis?.up === true, 10_000, 'Redis up');
      const [purged, kept] = gw.sim.data['acme']!.filter((r) => r.public_link_id !== null);
      const paths = {
        purged: `${LIST}/${purged!.id}`,
        byLink: `${LIST}/${purged!.public_link_id}`,
        kept: `${LIST}/${kept!.id}`,
        list: `${LIST}?page_size=5`,
      };
      for (const path of Object.values(paths)) await gw.get(path);
      for (const path of Object.values(paths))
        t.match((await gw.get(path)).headers['cache-status'], /hit/, `${path} cached`);

      await gw.app.purger.purge(asWorkspaceId('acme')!, { kind: 'recording', id: purged!.id });

      const status = async (path: string) => String((await gw.get(path)).headers['cache-status']);
      t.match(await status(paths.purged), /fwd=uri-miss/, 'the purged recording is fetched again');
      t.match(await status(paths.byLink), /hit|fwd=uri-miss/, 'its link code answers');
      // Before the list page: its answer would store the recordings it holds again.
      t.match(await status(paths.kept), /^recgw; hit/, 'another recording is still cached');
      t.match(await status(paths.list), /fwd=uri-miss/, 'the list pages are fetched again');
    },
  );
}
