// Redis losing its data or its purge log: nothing purged comes back, and every later purge takes effect on every app.
import t from 'tap';
import { Redis } from 'ioredis';
import { purgeLogKey } from '../../../src/redis/key-layout.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { startPrivateRedis, waitFor } from '../../helpers/redis.js';
import {
  metric,
  purge,
  startSharedGateways,
  waitForPurgeLog,
  waitShared,
  type SharedFleet,
} from '../../helpers/shared-gateways.js';

const LIST = '/api/external/v2/recordings';

void t.test(
  'after Redis restarts without its data, no entry from before a purge comes back and later purges reach every app',
  async (t) => {
    const redis = await startPrivateRedis(t);
    // Moving the simulator's clock makes each refetched body (signed URL, ETag) tell which fetch it came from.
    const simClock = new FakeClock(Date.now());
    const fleet: SharedFleet = await startSharedGateways(t, redis, {
      simOptions: { clock: simClock },
    });
    const {
      sim,
      gateways: [a, b],
    } = fleet;
    const path = `${LIST}/${sim.data['acme']![5]!.id}`;
    const etagOn = async (gw: typeof a): Promise<string> =>
      (await gw.get(path)).headers['etag'] as string;

    const e0 = await etagOn(a);
    t.equal(await etagOn(b), e0);
    simClock.advance(5_000);
    t.equal((await purge(a, { workspace: 'acme' })).status, 200);
    await waitForPurgeLog(b, performance.now());
    const e1 = await etagOn(a);
    t.not(e1, e0);
    t.equal(await etagOn(b), e1);

    // Redis restarts empty: the purge log is gone, so neither app can know what it missed.
    const since = performance.now();
    await redis.stop();
    await redis.start();
    await waitShared(fleet, redis, 10_000, since);
    for (const gw of [a, b])
      t.equal(
        await metric(gw, 'recgw_purge_log_resets_total'),
        1,
        'the lost log was noticed: every generation forgotten',
      );
    for (const gw of [a, b])
      t.not(await etagOn(gw), e0, 'the entry from before the first purge never comes back');
    const e2 = await etagOn(a);

    // The operator purges again; no app may answer from an entry stored before this purge.
    simClock.advance(5_000);
    t.equal((await purge(a, { workspace: 'acme' })).status, 200);
    const purgedAt = performance.now();
    await waitForPurgeLog(b, purgedAt);
    const before = new Set([e0, e1, e2]);
    for (const [name, gw] of [
      ['A', a],
      ['B', b],
    ] as const)
      t.notOk(before.has(await etagOn(gw)), `${name} serves an entry stored after the purge`);
  },
);

void t.test(
  'a purge log evicted under an app drops its L1 once; the next purge reaches it as usual',
  async (t) => {
    const redis = await startPrivateRedis(t);
    const fleet = await startSharedGateways(t, redis);
    const {
      sim,
      gateways: [a, b],
    } = fleet;
    const path = `${LIST}/${sim.data['acme']![6]!.id}`;
    t.equal((await a.get(path)).status, 200);
    t.match((await b.get(path)).headers['cache-status'], /^recgw; hit/);
    const raw = new Redis(redis.url);
    t.teardown(() => raw.quit());
    await raw.del(purgeLogKey(redis.keyPrefix));
    await waitFor(
      async () => (await metric(b, 'recgw_purge_log_resets_total')) === 1,
      3000,
      'B to notice the lost log',
    );
    t.match(
      (await b.get(path)).headers['cache-status'],
      /^recgw; hit/,
      'served again from L2 (its generation hash is intact)',
    );
    t.equal(sim.counters.total, 1, 'no upstream call: only warmth in L1 was spent');
    t.equal((await purge(a, { workspace: 'acme' })).status, 200);
    await waitForPurgeLog(b, performance.now());
    t.equal(
      (await b.get(path)).headers['cache-status'],
      'recgw; fwd=uri-miss; fwd-status=200; stored; detail=cold',
      'the next purge takes effect on B',
    );
  },
);
