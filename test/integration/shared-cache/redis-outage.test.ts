// Redis killed or stalled in the middle of traffic through two gateway apps: clients notice nothing, and L2 comes back by itself.
import t, { type Test } from 'tap';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Reply, TestGateway } from '../../helpers/gateway.js';
import { startPrivateRedis, waitFor, type PrivateRedis } from '../../helpers/redis.js';
import { metric, startSharedGateways } from '../../helpers/shared-gateways.js';
import { runStream, slowest, summarize } from '../../helpers/shared-stream.js';

const LIST = '/api/external/v2/recordings';
const COMMAND_TIMEOUT_MS = 100;
const SIM_MS = 20;
/** Timers, two apps, a simulator and the test client share a possibly loaded 2-core machine. */
const SLACK_MS = 300;
const BOUND_MS = COMMAND_TIMEOUT_MS + SIM_MS + SLACK_MS;

/** What the operator saw on the admin listener while Redis was away. */
interface DuringOutage {
  readyz: Reply;
  redisUp: number;
}

async function fleetFor(
  t: Test,
  redis: PrivateRedis,
): Promise<{ gateways: TestGateway[]; warm: string[] }> {
  const { sim, gateways } = await startSharedGateways(t, redis, {
    config: { cache: { redis: { commandTimeout: `${COMMAND_TIMEOUT_MS}ms` } } },
  });
  const warm = [0, 1, 2].map((i) => `${LIST}/${sim.data['acme']![i]!.id}`);
  for (const gw of gateways) for (const path of warm) t.equal((await gw.get(path)).status, 200);
  // Run the cold path once per app beforehand, so first-call costs do not count as the outage's.
  for (const [i, gw] of gateways.entries())
    await gw.get(`${LIST}?page_number=${900 + i}&page_size=1`);
  sim.faults.set({ kind: 'latency', ms: SIM_MS });
  return { gateways, warm };
}

/** Polls until a page fetched through A is found in L2 by B; resolves with how long that took. */
async function untilL2Hit(gateways: TestGateway[], since: number): Promise<number> {
  const [a, b] = gateways as [TestGateway, TestGateway];
  let page = 10_000;
  await waitFor(
    async () => {
      const path = `${LIST}?page_number=${page++}&page_size=1`;
      await a.get(path);
      return /^recgw; hit/.test(String((await b.get(path)).headers['cache-status']));
    },
    5000,
    'B to find in L2 what A stored',
  );
  return performance.now() - since;
}

async function checkStream(
  t: Test,
  gateways: TestGateway[],
  warm: string[],
  operator: () => Promise<DuringOutage>,
): Promise<DuringOutage> {
  const [samples, during] = await Promise.all([
    runStream(gateways, { warm, firstColdPage: 1 }),
    operator(),
  ]);
  t.comment(summarize(samples));
  t.equal(
    samples.filter((s) => s.status !== 200).length,
    0,
    'every request answered 200: zero 5xx',
  );
  const worst = slowest(samples);
  const net = worst.ms - worst.stalledMs;
  t.ok(
    net < BOUND_MS,
    `slowest request ${net.toFixed(1)}ms net of ${worst.stalledMs.toFixed(1)}ms event-loop stalls (${worst.path} at ${worst.at.toFixed(0)}ms) < ${BOUND_MS}ms`,
  );
  const hitsDuring = samples.filter(
    (s) => s.at > 1100 && s.at < 1900 && s.path.startsWith(`${LIST}/`),
  );
  t.ok(
    hitsDuring.every((s) => /^recgw; hit/.test(String(s.cacheStatus))),
    'cached resources were still hits from L1 during the outage',
  );
  t.equal(during.readyz.status, 200, '/readyz stays 200');
  t.same(during.readyz.json(), { status: 'degraded', redis: 'down' });
  t.equal(during.redisUp, 0, 'recgw_redis_up 0 during the outage');
  return during;
}

async function checkRecovered(t: Test, gateways: TestGateway[], since: number): Promise<void> {
  const took = await untilL2Hit(gateways, since);
  t.comment(`L2 hit again ${took.toFixed(0)}ms after Redis came back`);
  t.ok(took < 5000, 'L2 used again within seconds, without a restart');
  for (const gw of gateways) {
    await waitFor(() => gw.app.redis?.up === true, 5000, 'up again');
    t.equal(await metric(gw, 'recgw_redis_up'), 1, 'recgw_redis_up back to 1');
    t.same((await gw.admin('/readyz')).json(), { status: 'ready', redis: 'up' });
  }
}

void t.test(
  'Redis killed in the middle of a stream: zero 5xx, bounded latency; restarted: L2 used again',
  async (t) => {
    const redis = await startPrivateRedis(t);
    const { gateways, warm } = await fleetFor(t, redis);
    let restartedAt = 0;
    await checkStream(t, gateways, warm, async () => {
      const started = performance.now();
      await sleep(1000);
      await redis.stop();
      await waitFor(
        () => gateways.every((gw) => gw.app.redis?.up === false),
        1000,
        'both apps to see Redis down',
      );
      const during = {
        readyz: await gateways[0]!.admin('/readyz'),
        redisUp: await metric(gateways[0]!, 'recgw_redis_up'),
      };
      await sleep(Math.max(0, 2000 - (performance.now() - started)));
      await redis.start();
      restartedAt = performance.now();
      return during;
    });
    const errors = await metric(gateways[0]!, 'recgw_redis_errors_total');
    t.ok(errors > 0, `recgw_redis_errors_total counted the failed commands (${errors})`);
    await checkRecovered(t, gateways, restartedAt);
  },
);

void t.test(
  'Redis stalled in the middle of a stream: zero 5xx, bounded latency; resumed: L2 used again',
  async (t) => {
    const redis = await startPrivateRedis(t);
    t.teardown(() => redis.resume());
    const { gateways, warm } = await fleetFor(t, redis);
    let resumedAt = 0;
    await checkStream(t, gateways, warm, async () => {
      const started = performance.now();
      await sleep(1000);
      redis.pause();
      await waitFor(
        () => gateways.every((gw) => gw.app.redis?.up === false),
        1000,
        'both breakers to open',
      );
      const during = {
        readyz: await gateways[1]!.admin('/readyz'),
        redisUp: await metric(gateways[1]!, 'recgw_redis_up'),
      };
      await sleep(Math.max(0, 2000 - (performance.now() - started)));
      redis.resume();
      resumedAt = performance.now();
      return during;
    });
    t.ok(
      (await metric(gateways[0]!, 'recgw_redis_errors_total', { op: 'get' })) > 0,
      'timed-out gets counted',
    );
    await checkRecovered(t, gateways, resumedAt);
  },
);

void t.test(
  'one request alone when Redis stalls: read timeout + upstream, not a second timeout for the write',
  async (t) => {
    const redis = await startPrivateRedis(t);
    t.teardown(() => redis.resume());
    // A longer timeout than the stream tests': the check below tells one timeout from two, so
    // the room it leaves for scheduling on a loaded machine is one whole timeout.
    const timeoutMs = 500;
    const { sim, gateways } = await startSharedGateways(t, redis, {
      config: { cache: { redis: { commandTimeout: `${timeoutMs}ms` } } },
    });
    const [a] = gateways;
    await a.get(`${LIST}?page_number=900&page_size=1`);
    sim.faults.set({ kind: 'latency', ms: SIM_MS });
    redis.pause();
    const started = performance.now();
    const reply = await a.get(`${LIST}?page_number=901&page_size=1`);
    const ms = performance.now() - started;
    t.equal(reply.status, 200);
    t.ok(ms >= timeoutMs, `the read waited for the timeout (${ms.toFixed(1)}ms)`);
    // The L2 write is not awaited, so a lone miss pays the timeout once (the read), never twice.
    t.ok(
      ms < 2 * timeoutMs + SIM_MS,
      `a lone miss took ${ms.toFixed(1)}ms (under two timeouts plus the upstream)`,
    );
  },
);
