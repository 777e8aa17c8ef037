// Redis down, stalled and flapping under a real gateway: every request answered from L1 or the upstream, no 5xx, bounded latency.
import t, { type Test } from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { startPrivateRedis, waitFor, type PrivateRedis } from '../../helpers/redis.js';
import { LIST, listProblem, metricSample, recordingProblem, timed } from './fault-fixture.js';

/** commandTimeout is 100 ms; a request makes a handful of Redis calls before its breaker opens. */
const BOUND_MS = 1000;

async function redisGateway(t: Test): Promise<{ gw: TestGateway; redis: PrivateRedis }> {
  const redis = await startPrivateRedis(t);
  const gw = await startGateway(t, {
    redisUrl: redis.url,
    config: {
      cache: {
        redis: { keyPrefix: redis.keyPrefix, commandTimeout: '100ms', connectTimeout: '300ms' },
      },
    },
  });
  // Until it has read the purge log once, an app trusts no cached generation (it caches apart).
  await waitFor(
    () => gw.app.generations.syncedAt > -Infinity,
    5_000,
    'the first read of the purge log',
  );
  return { gw, redis };
}

/** recgw_redis_errors_total summed over its `op` label. */
async function redisErrors(gw: TestGateway): Promise<number> {
  const text = (await gw.admin('/metrics')).text;
  return text
    .split('\n')
    .filter((line) => line.startsWith('recgw_redis_errors_total{'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

let probes = 0;

/** A request for a page not cached yet, so it asks Redis (an L1 hit never would) and lets the Redis breaker's probe through. */
async function probe(gw: TestGateway): Promise<void> {
  await gw.get(`${LIST}?page_number=${++probes}&page_size=7`);
}

/** Requests `count` list pages and recordings from `from` on; each must be a correct 200 within the bound. */
async function sweep(
  t: Test,
  gw: TestGateway,
  from: number,
  count: number,
  what: string,
): Promise<void> {
  const statuses: number[] = [];
  let slowest = 0;
  for (let i = from; i < from + count; i++) {
    const recording = gw.sim.data['acme']![i % 120]!;
    const list = await timed(() => gw.get(`${LIST}?page_number=${(i % 12) + 1}&page_size=10`));
    const single = await timed(() => gw.get(`${LIST}/${recording.id}`));
    statuses.push(list.value.status, single.value.status);
    slowest = Math.max(slowest, list.ms, single.ms);
    if (list.value.status === 200) {
      const problem = listProblem(gw.sim, 'acme', list.value.json(), (i % 12) + 1, 10, false);
      if (problem !== undefined) t.fail(`${what}: ${problem}`);
    }
    if (single.value.status === 200) {
      const problem = recordingProblem(gw.sim, 'acme', single.value.json(), false);
      if (problem !== undefined) t.fail(`${what}: ${problem}`);
    }
  }
  t.same([...new Set(statuses)], [200], `${what}: every request answered 200 with the real data`);
  t.ok(slowest < BOUND_MS, `${what}: slowest request ${slowest.toFixed(0)} ms`);
}

void t.test(
  'Redis killed: cached entries come from L1 without upstream calls, the rest from the upstream; it is used again once back',
  async (t) => {
    const { gw, redis } = await redisGateway(t);
    await sweep(t, gw, 0, 10, 'Redis up');
    t.equal(await metricSample(gw, 'recgw_redis_up'), 1);

    await redis.stop();
    // The tier learns of the kill from its socket closing, a moment after the process is gone.
    await waitFor(() => gw.app.redis?.up === false, 5_000, 'the tier to see Redis go');
    const degraded = await gw.admin('/readyz');
    t.equal(degraded.status, 200, 'ready during the outage');
    t.same(degraded.json(), { status: 'degraded', redis: 'down' });
    const before = gw.sim.counters.total;
    await sweep(t, gw, 0, 10, 'Redis down, cached');
    t.equal(gw.sim.counters.total, before, 'cached entries answered from L1 alone');
    await sweep(t, gw, 30, 10, 'Redis down, not cached');
    t.ok(gw.sim.counters.total > before, 'the rest fetched from the upstream');
    t.equal(await metricSample(gw, 'recgw_redis_up'), 0, 'the outage is reported');
    t.same(
      (await gw.admin('/readyz')).json(),
      { status: 'degraded', redis: 'down' },
      'still degraded, not unready',
    );

    await redis.start();
    await waitFor(
      async () => (await metricSample(gw, 'recgw_redis_up')) === 1,
      10_000,
      'redis_up to return to 1',
    );
    await sweep(t, gw, 60, 10, 'Redis back');
    const back = await gw.admin('/readyz');
    t.equal(back.status, 200, 'ready throughout');
    t.same(back.json(), { status: 'ready', redis: 'up' });
  },
);

void t.test(
  'Redis stalled (SIGSTOP): requests are cut loose from it within the bound, and it is used again once it answers',
  async (t) => {
    const { gw, redis } = await redisGateway(t);
    await sweep(t, gw, 0, 5, 'Redis up');
    redis.pause();
    t.teardown(() => redis.resume());
    await sweep(t, gw, 0, 5, 'Redis stalled, cached');
    await sweep(t, gw, 20, 10, 'Redis stalled, not cached');
    t.equal(await metricSample(gw, 'recgw_redis_up'), 0, 'the stall is reported');
    redis.resume();
    await waitFor(
      async () => {
        await probe(gw);
        return (await metricSample(gw, 'recgw_redis_up')) === 1;
      },
      15_000,
      'redis_up to return to 1',
    );
    await sweep(t, gw, 40, 5, 'Redis resumed');
  },
);

void t.test(
  'Redis flapping: killed and restarted, stalled and resumed, over and over, while requests keep coming',
  async (t) => {
    const { gw, redis } = await redisGateway(t);
    let stop = false;
    const statuses = new Map<number, number>();
    let slowest = 0;
    let served = 0;
    const problems: string[] = [];
    // A steady client, running through every flap; every 200 must carry the simulator's data.
    const client = (async () => {
      for (let i = 0; !stop; i++) {
        const recording = gw.sim.data['acme']![i % 120]!;
        const pageNumber = (i % 12) + 1;
        const isList = i % 3 === 0;
        const res = await timed(() =>
          gw.get(
            isList ? `${LIST}?page_number=${pageNumber}&page_size=10` : `${LIST}/${recording.id}`,
          ),
        );
        statuses.set(res.value.status, (statuses.get(res.value.status) ?? 0) + 1);
        slowest = Math.max(slowest, res.ms);
        served++;
        if (res.value.status !== 200) continue;
        const problem = isList
          ? listProblem(gw.sim, 'acme', res.value.json(), pageNumber, 10, false)
          : recordingProblem(gw.sim, 'acme', res.value.json(), false);
        if (problem !== undefined) problems.push(problem);
      }
    })();
    for (let round = 0; round < 3; round++) {
      await redis.stop();
      await sleep(300);
      await redis.start();
      await sleep(300);
      redis.pause();
      await sleep(300);
      redis.resume();
      await sleep(300);
    }
    stop = true;
    await client;
    t.ok(served > 50, `the client kept going (${served} requests)`);
    t.same(
      [...statuses.keys()],
      [200],
      `every request answered 200: ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    t.ok(slowest < BOUND_MS, `slowest request ${slowest.toFixed(0)} ms`);
    t.same(problems, [], "every 200 matched the simulator's data");
    // Proves the flaps were felt: a stop or stall that did nothing would leave this at 0.
    t.ok((await redisErrors(gw)) > 0, 'the gateway counted failed Redis commands');
    await waitFor(
      async () => {
        await probe(gw);
        return (await metricSample(gw, 'recgw_redis_up')) === 1;
      },
      15_000,
      'redis_up to return to 1 after the last flap',
    );
  },
);
