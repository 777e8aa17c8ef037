/**
 * A fleet for exact- and soft-purge tests: one gateway without Redis, or two on one Redis, on the
 * catalog upstream (purge-catalog.ts), with what warming and reading everything needs.
 */
import type { TestGateway } from './gateway.js';
import { startGateway } from './gateway.js';
import { getRedis, waitFor, type TestLike } from './redis.js';
import { startSimulator } from '../../src/sim/server.js';
import {
  PAGES,
  TOTAL,
  pagePath,
  recordingId,
  startCatalog,
  type CatalogOrigin,
} from './purge-catalog.js';

export const REC = '/api/external/v2/recordings';

export interface Fleet {
  catalog: CatalogOrigin;
  gateways: TestGateway[];
  /** Purges through the first gateway's admin listener; resolves once every gateway applied it. */
  purge(body: Record<string, unknown>): Promise<Record<string, unknown>>;
}

export async function fleet(
  t: TestLike & { equal: (a: unknown, b: unknown, m: string) => void },
  withRedis: boolean,
  purge: Record<string, unknown> = {},
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
      purge,
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
export async function readAll(gw: TestGateway): Promise<void> {
  for (let i = 0; i < TOTAL; i++) await gw.get(`${REC}/${recordingId(i)}`);
  for (let n = 1; n <= PAGES; n++) await gw.get(pagePath(n));
}

/** Warms pages 1-8 on every gateway (the first from the upstream, the others from Redis), then resets the counts. */
export async function warm(f: Fleet): Promise<void> {
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
export async function refetched(f: Fleet): Promise<string[]> {
  for (const gw of f.gateways) await readAll(gw);
  return f.catalog.fetched();
}
