// Exact purges over real sockets, with and without Redis: after warming list pages 1-8 (and every
// recording through them), a purge reaches exactly the entries that answer to it, on every
// instance; the upstream counts per URL say what was fetched again. Soft purges serve the old
// data once, stale, while one refresh brings the new data; a hard purge never serves stale.
import t from 'tap';
import { asWorkspaceId } from '../../../src/brands.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { getRedis, waitFor, type TestLike } from '../../helpers/redis.js';
import { startSimulator } from '../../../src/sim/server.js';
import {
  PAGES,
  TOTAL,
  pagePath,
  recordingId,
  startCatalog,
  upstreamPage,
  upstreamRecording,
  type CatalogOrigin,
} from '../../helpers/purge-catalog.js';

const REC = '/api/external/v2/recordings';

interface Fleet {
  catalog: CatalogOrigin;
  gateways: TestGateway[];
  /** Purges through the first gateway's admin listener; resolves once every gateway applied it. */
  purge(body: Record<string, unknown>): Promise<Record<string, unknown>>;
}

async function fleet(
  t: TestLike & { equal: (a: unknown, b: unknown, m: string) => void },
  withRedis: boolean,
): Promise<Fleet> {
  const catalog = await startCatalog(t);
  const redis = withRedis ? await getRedis(t) : undefined;
  const sim = await startSimulator({ workspaces: ['acme'], recordingsPerWorkspace: 1 });
  t.teardown(() => sim.close());
  const config = {
    upstream: { baseUrl: catalog.baseUrl },
    cache: {
      ttl: { list: '5m', recording: '5m' },
      staleWhileRevalidate: '5m',
      ...(redis === undefined
        ? {}
        : { redis: { keyPrefix: redis.keyPrefix, commandTimeout: '500ms' } }),
    },
  };
  const gateways: TestGateway[] = [];
  for (let i = 0; i < (withRedis ? 2 : 1); i++)
    gateways.push(
      await startGateway(t, {
        sim,
        config,
        ...(redis === undefined ? { redis: null } : { redisUrl: redis.url }),
      }),
    );
  const caughtUp = async (since: number): Promise<void> => {
    if (withRedis)
      await waitFor(
        () =>
          gateways.every((gw) => gw.app.redis?.up === true && gw.app.generations.syncedAt >= since),
        10_000,
        'every gateway read the purge log',
      );
  };
  await caughtUp(performance.now());
  return {
    catalog,
    gateways,
    async purge(body) {
      const reply = await gateways[0]!.admin('/admin/purge', {
        method: 'POST',
        body: JSON.stringify({ workspace: 'acme', ...body }),
        headers: { authorization: 'Bearer test-admin-token', 'content-type': 'application/json' },
      });
      t.equal(reply.status, 200, `purge ${JSON.stringify(body)} answered 200`);
      await caughtUp(performance.now());
      return reply.json() as Record<string, unknown>;
    },
  };
}

/** Every recording by UUID, then every page: recordings first, so a page fetched again does not refill them. */
async function readAll(gw: TestGateway): Promise<void> {
  for (let i = 0; i < TOTAL; i++) await gw.get(`${REC}/${recordingId(i)}`);
  for (let n = 1; n <= PAGES; n++) await gw.get(pagePath(n));
}

/** Warms pages 1-8 on every gateway (the first from the upstream, the others from Redis), then resets the counts. */
async function warm(f: Fleet): Promise<void> {
  for (const gw of f.gateways) {
    for (let n = 1; n <= PAGES; n++) await gw.get(pagePath(n));
    // The recordings a page holds are stored just after it is answered, L2 writes a moment later.
    await waitFor(
      async () =>
        String((await gw.get(`${REC}/${recordingId(TOTAL - 1)}`)).headers['cache-status']).includes(
          'hit',
        ),
      5_000,
      'the pages warmed their recordings',
    );
    if (f.gateways.length > 1) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  for (const gw of f.gateways) await readAll(gw);
  f.catalog.reset();
}

/** Reads everything on every gateway and returns what reached the upstream. */
async function refetched(f: Fleet): Promise<string[]> {
  for (const gw of f.gateways) await readAll(gw);
  return f.catalog.fetched();
}

for (const withRedis of [false, true]) {
  const mode = withRedis ? 'with Redis (two gateways)' : 'without Redis';

  void t.test(`${mode}: a recording purge refetches exactly its page and itself`, async (t) => {
    const f = await fleet(t, withRedis);
    await warm(f);
    t.same(await refetched(f), [], 'warm: nothing reaches the upstream');
    // Recording 12 is on page 3 only.
    f.catalog.change(12);
    const answer = await f.purge({ recording: recordingId(12) });
    t.equal(answer['matched'], withRedis ? 2 : 2, 'its page and its own entry were indexed');
    t.same(
      await refetched(f),
      [upstreamRecording(12), upstreamPage(3)].sort(),
      'exactly page 3 and the recording, once across the fleet',
    );
    for (const gw of f.gateways) {
      t.equal((await gw.get(`${REC}/${recordingId(12)}`)).json().title, 'r12 v2', 'new data');
      const page = (await gw.get(pagePath(3))).json() as { recordings: Array<{ title: string }> };
      t.equal(page.recordings[2]!.title, 'r12 v2', 'page 3 holds the new data');
    }
  });

  void t.test(`${mode}: folder and tag purges refetch exactly what holds them`, async (t) => {
    const f = await fleet(t, withRedis);
    await warm(f);
    const folder = await f.purge({ folder_id: 'fold-a' });
    t.equal(folder['matched'], 4, 'two recordings, two pages');
    t.same(
      await refetched(f),
      [upstreamRecording(6), upstreamRecording(27), upstreamPage(2), upstreamPage(6)].sort(),
      'folder fold-a: recordings 6 and 27, pages 2 and 6',
    );
    f.catalog.reset();
    const tag = await f.purge({ tag_id: 'tag-x' });
    t.equal(tag['matched'], 5, 'three recordings, two pages');
    t.same(
      await refetched(f),
      [
        upstreamRecording(16),
        upstreamRecording(36),
        upstreamRecording(37),
        upstreamPage(4),
        upstreamPage(8),
      ].sort(),
      'tag tag-x: recordings 16, 36, 37, pages 4 and 8',
    );
    f.catalog.reset();
    const unknown = await f.purge({ folder_id: 'no-such-folder' });
    t.equal(unknown['matched'], 0, 'an unknown folder matches nothing');
    t.match(unknown['note'], /nothing was dropped/, 'and says so');
    t.same(await refetched(f), [], 'nothing is fetched again');
  });

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
        // Each instance holds its own copy, marked stale by the purge: each refreshes it once.
        t.equal(stale.json().title, 'r12 v1', 'answered at once, with the old data');
        t.match(
          stale.headers['cache-status'],
          /^recgw; hit; ttl=-\d+$/,
          'labelled stale, not fresh',
        );
        t.equal(stale.headers['cache-control'], 'private, max-age=0', 'max-age 0');
        await waitFor(
          () => (f.catalog.counts().get(upstreamRecording(12)) ?? 0) >= index + 1,
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
      const instances = f.gateways.length;
      t.equal(
        f.catalog.counts().get(upstreamRecording(12)),
        instances,
        'one refresh of the recording per instance',
      );
      t.same(
        (await refetched(f)).filter((url) => url !== upstreamRecording(12)),
        Array<string>(instances).fill(upstreamPage(3)),
        'and besides it only page 3, refreshed once per instance',
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
