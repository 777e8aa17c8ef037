/**
 * Gateway apps on one Redis and one controllable upstream (held-upstream.ts), for purge tests:
 * started, connected and caught up with the purge log before the test goes on.
 */
import { mergeConfig } from '../../src/config/load.js';
import { startSimulator } from '../../src/sim/server.js';
import { startGateway, type TestGateway } from './gateway.js';
import type { HeldUpstream } from './held-upstream.js';
import { waitFor, type TestLike } from './redis.js';

/**
 * Starts `count` apps on `redis` (url and key prefix) and `upstream`; `config` is merged over the
 * test defaults; `random(app)` is each app's refresh-ahead draw when given.
 */
export async function startPurgeFleet(
  t: TestLike,
  redis: { url: string; keyPrefix: string },
  upstream: HeldUpstream,
  count = 2,
  config: Record<string, unknown> = {},
  options: { random?: (app: number) => number } = {},
): Promise<TestGateway[]> {
  const gateways: TestGateway[] = [];
  // A generous command timeout: the 2-core test box is shared, and a purge slower than the
  // timeout answers 503 (correctly, but it is not what these tests are about).
  // A held fetch ends when its test releases it, never by the gateway's timeout: a 504 (or a
  // retry that is held again) would be a loaded host's timing, not the purge behaviour tried.
  const base = {
    upstream: {
      baseUrl: upstream.baseUrl,
      timeouts: { headers: '60s', body: '60s', deadline: '60s' },
    },
    cache: { redis: { keyPrefix: redis.keyPrefix, commandTimeout: '500ms' } },
  };
  // The gateway helper wants a simulator; one idle one serves every app (the upstream is `upstream`).
  const sim = await startSimulator({ workspaces: ['acme'], recordingsPerWorkspace: 1 });
  t.teardown(() => sim.close());
  for (let i = 0; i < count; i++) {
    const random = options.random;
    gateways.push(
      await startGateway(t, {
        sim,
        redisUrl: redis.url,
        config: mergeConfig(base, config),
        ...(random === undefined ? {} : { random: () => random(i) }),
      }),
    );
  }
  await caughtUp(gateways);
  return gateways;
}

/**
 * Waits until every app is connected and has read the purge log completely since now: each has
 * then applied every purge answered before this call.
 */
export async function caughtUp(gateways: readonly TestGateway[]): Promise<void> {
  const since = performance.now();
  await waitFor(
    () => gateways.every((gw) => gw.app.redis?.up === true && gw.app.generations.syncedAt >= since),
    10_000,
    'every app connected and caught up',
  );
}

/** The fetch number of the value an app serves for a path (-1 when not a 200 from this upstream). */
export async function servedFetch(
  gw: TestGateway,
  path: string,
  workspace = 'acme',
): Promise<number> {
  const reply = await gw.get(path, { workspace, key: 'purge-test-key' });
  if (reply.status !== 200) return -1;
  const body = reply.json() as { title?: string; recordings?: Array<{ title: string }> };
  const titles = body.recordings?.map((r) => r.title) ?? [body.title];
  return Math.min(...titles.map((title) => Number(/-s(\d+)$/.exec(title ?? '')?.[1] ?? -1)));
}
