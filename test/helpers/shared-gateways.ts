/**
 * Several gateway apps sharing one simulator and one Redis (a url, or Cluster seed nodes) under a
 * key prefix of their own, as SREs run them behind a load balancer. Every app is connected and
 * subscribed to purges before the test starts; everything is torn down after it.
 */
import { Redis } from 'ioredis';
import { asWorkspaceId } from '../../src/brands.js';
import type { Clock } from '../../src/clock.js';
import { uuidKey, type Generation } from '../../src/cache/entry/keys.js';
import { purgeChannel } from '../../src/redis/key-layout.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/sim/server.js';
import { startGateway, type Reply, type TestGateway } from './gateway.js';
import { waitFor, type TestLike } from './redis.js';

/** Where the shared tier lives: a standalone url, or Cluster seed nodes; and this test's key prefix. */
export type SharedRedis =
  | { url: string; keyPrefix: string }
  | { nodes: ReadonlyArray<{ host: string; port: number }>; keyPrefix: string };

/** Options of startSharedGateways. */
export interface SharedOptions {
  /** How many apps (default 2). */
  count?: number;
  /** Config overrides applied to every app (merged under the Redis settings). */
  config?: Record<string, unknown>;
  simOptions?: SimulatorOptions;
  /** The clock every app's cache runs on (default: the real one). */
  clock?: Clock;
}

/** The running apps and the simulator they share. */
export interface SharedFleet {
  sim: Simulator;
  gateways: [TestGateway, TestGateway, ...TestGateway[]];
}

function redisConfig(redis: SharedRedis): Record<string, unknown> {
  return 'url' in redis
    ? { keyPrefix: redis.keyPrefix }
    : {
        url: null,
        mode: 'cluster',
        nodes: redis.nodes.map(({ host, port }) => ({ host, port })),
        keyPrefix: redis.keyPrefix,
      };
}

/** Subscribers of the purge channel, summed over every node (in a Cluster each node counts its own). */
export async function purgeSubscribers(redis: SharedRedis): Promise<number> {
  const targets =
    'url' in redis ? [redis.url] : redis.nodes.map(({ host, port }) => `redis://${host}:${port}`);
  let total = 0;
  for (const url of targets) {
    const client = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 500 });
    client.on('error', () => {});
    try {
      const reply = (await client.pubsub('NUMSUB', purgeChannel(redis.keyPrefix))) as [
        string,
        number,
      ];
      total += Number(reply[1]);
    } catch {
      // A node that cannot answer (stopped on purpose) has no subscribers to count.
    } finally {
      client.disconnect();
    }
  }
  return total;
}

/** Waits until every app's tier is up, all of them listen on the purge channel, and each has read the purge log since `since`. */
export async function waitShared(
  fleet: SharedFleet,
  redis: SharedRedis,
  timeoutMs = 10_000,
  since = performance.now(),
): Promise<void> {
  await waitFor(
    () => fleet.gateways.every((gw) => gw.app.redis?.up === true),
    timeoutMs,
    'every app connected to Redis',
  );
  await waitFor(
    async () => (await purgeSubscribers(redis)) >= fleet.gateways.length,
    timeoutMs,
    'every app subscribed to purges',
  );
  await waitFor(
    () => fleet.gateways.every((gw) => gw.app.generations.syncedAt >= since),
    timeoutMs,
    'every app to read the purge log',
  );
}

/** Waits until an app has completed a read of the purge log begun after `since` (performance.now()): it applied every purge answered before. */
export async function waitForPurgeLog(
  gw: TestGateway,
  since: number,
  timeoutMs = 2000,
): Promise<void> {
  await waitFor(() => gw.app.generations.syncedAt >= since, timeoutMs, 'a read of the purge log');
}

/** Starts `count` apps on one simulator and one Redis, ready for shared-cache tests. */
export async function startSharedGateways(
  t: TestLike,
  redis: SharedRedis,
  options: SharedOptions = {},
): Promise<SharedFleet> {
  const sim = await startSimulator(options.simOptions);
  t.teardown(() => sim.close());
  const cache = (options.config?.['cache'] ?? {}) as Record<string, unknown>;
  const config = {
    ...options.config,
    cache: {
      ...cache,
      redis: { ...(cache['redis'] as object | undefined), ...redisConfig(redis) },
    },
  };
  const gateways: TestGateway[] = [];
  for (let i = 0; i < (options.count ?? 2); i++) {
    gateways.push(
      await startGateway(t, {
        sim,
        config,
        ...('url' in redis ? { redisUrl: redis.url } : {}),
        ...(options.clock === undefined ? {} : { clock: options.clock }),
      }),
    );
  }
  const fleet = { sim, gateways: gateways as SharedFleet['gateways'] };
  await waitShared(fleet, redis);
  return fleet;
}

/** The path the simulator sees for one recording of acme (its counters count by path). */
export function upstreamPath(id: string, workspace = 'acme'): string {
  return `/ws/${workspace}/api/external/v2/recordings/${id}`;
}

/** POST /admin/purge through one app, with the test admin token; the body may be malformed on purpose. */
export async function purge(gw: TestGateway, body: Record<string, unknown>): Promise<Reply> {
  return gw.admin('/admin/purge', {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { authorization: 'Bearer test-admin-token', 'content-type': 'application/json' },
  });
}

/** The generation an app uses for a workspace right now (undefined while it would still load it). */
export function generationOf(gw: TestGateway, workspace = 'acme'): Generation | undefined {
  const generation = gw.app.tiers.generation(asWorkspaceId(workspace)!);
  return generation instanceof Promise ? undefined : { all: generation.all, list: generation.list };
}

/**
 * Waits until the L2 holds `gw`'s entry of recording `id` under its current generation. An answer
 * is written to L2 after it is sent (tiers.ts: the write does not hold the answer back), so a
 * second app asked at once may come before the write; on a loaded host it does.
 */
export async function landedInL2(gw: TestGateway, id: string, workspace = 'acme'): Promise<void> {
  const ws = asWorkspaceId(workspace)!;
  await waitFor(
    async () => {
      const generation = await gw.app.tiers.generation(ws);
      return (
        (await gw.app.tiers.readL2(ws, generation, uuidKey(id.toLowerCase()))).entry !== undefined
      );
    },
    10_000,
    `recording ${id} of ${workspace} in L2`,
  );
}

/** Waits until an app uses this generation for the workspace, loading it if needed. */
export async function waitForGeneration(
  gw: TestGateway,
  generation: Generation,
  workspace = 'acme',
  timeoutMs = 2000,
): Promise<void> {
  await waitFor(
    async () => {
      const current = await gw.app.tiers.generation(asWorkspaceId(workspace)!);
      return (
        current.all === generation.all &&
        current.list === generation.list &&
        (current.rev ?? 0) === (generation.rev ?? 0)
      );
    },
    timeoutMs,
    `generation ${generation.all}.${generation.list}.${generation.rev ?? 0} of ${workspace}`,
  );
}

/** Sum of one metric's samples whose labels include `labels`, scraped over the admin listener. */
export async function metric(
  gw: TestGateway,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const text = (await gw.admin('/metrics')).text;
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const open = line.indexOf('{');
    const close = line.lastIndexOf('}');
    const found: Record<string, string> = {};
    if (open === name.length)
      for (const [, k, v] of line.slice(open + 1, close).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
        found[k!] = v!;
    if (Object.entries(labels).every(([k, v]) => found[k] === v))
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}
