// The finer purge forms (DESIGN A8): `lists: true` purges every list page, one list page exactly
// that one (an exact purge), and both keep recordings; malformed combinations are refused.
import t from 'tap';
import { startHeldUpstream } from '../../helpers/held-upstream.js';
import { servedFetch, startPurgeFleet } from '../../helpers/purge-fleet.js';
import { getRedis, waitFor } from '../../helpers/redis.js';
import type { TestGateway } from '../../helpers/gateway.js';
import { purge } from '../../helpers/shared-gateways.js';

const R = '/api/external/v2/recordings';

const redis = await getRedis(t);

for (const body of [
  { workspace: 'acme', lists: true },
  { workspace: 'acme', page_number: 1, page_size: 3 },
]) {
  void t.test(
    `${JSON.stringify(body)}: the list pages it names refetched on every app, recordings kept`,
    async (t) => {
      const upstream = await startHeldUpstream(t, 4);
      const [a, b] = (await startPurgeFleet(
        t,
        { url: redis.url, keyPrefix: `${redis.keyPrefix}-${Object.keys(body).length}` },
        upstream,
      )) as [TestGateway, TestGateway];
      const page = `${R}?page_size=3`;
      const other = `${R}?page_number=2&page_size=3`;
      const recording = `${R}/${upstream.recordings[3]!.id}`;
      // Each app proves the key once, so every later read may come from the cache.
      for (const gw of [a, b]) await servedFetch(gw, `${R}?page_number=4&page_size=1`);
      for (const gw of [a, b])
        for (const path of [page, other, recording]) t.ok((await servedFetch(gw, path)) >= 0);
      const from = upstream.nextFetch;
      const reply = await purge(b, body);
      t.equal(reply.status, 200);
      t.match(reply.json(), { purged: { workspace: 'acme', recording: null, lists: true } });
      const purgedAt = performance.now();
      await waitFor(() => a.app.generations.syncedAt >= purgedAt, 2000, 'A to read the purge');
      // Recordings first: a page fetched again refreshes the recordings it holds.
      const fetches = upstream.nextFetch;
      for (const gw of [a, b]) t.ok((await servedFetch(gw, recording)) < from, 'a recording stays');
      t.equal(upstream.nextFetch, fetches, 'no upstream fetch for it: it was kept in Redis');
      for (const gw of [a, b]) {
        t.ok((await servedFetch(gw, page)) >= from, 'the page is fetched again');
        if ('lists' in body) t.ok((await servedFetch(gw, other)) >= from, 'and every other page');
        else t.ok((await servedFetch(gw, other)) < from, 'one page is purged alone: others stay');
      }
    },
  );
}

void t.test('malformed scopes are refused with 400 and purge nothing', async (t) => {
  const upstream = await startHeldUpstream(t, 1);
  const [a] = (await startPurgeFleet(
    t,
    { url: redis.url, keyPrefix: `${redis.keyPrefix}-bad` },
    upstream,
    1,
  )) as [TestGateway];
  const bodies: Array<[Record<string, unknown>, RegExp]> = [
    [{ workspace: 'acme', lists: false }, /"lists" must be true/],
    [{ workspace: 'acme', page_number: 1 }, /"page_number" and "page_size"/],
    [{ workspace: 'acme', page_number: 0, page_size: 3 }, /"page_number" and "page_size"/],
    [{ workspace: 'acme', page_number: '1', page_size: 'x' }, /"page_number" and "page_size"/],
    [{ workspace: 'acme', recording: upstream.recordings[0]!.id, lists: true }, /at most one of/],
  ];
  for (const [body, message] of bodies) {
    const reply = await purge(a, body);
    t.equal(reply.status, 400, JSON.stringify(body));
    t.match(reply.json(), { error: message, code: 'BAD_REQUEST' });
  }
});
