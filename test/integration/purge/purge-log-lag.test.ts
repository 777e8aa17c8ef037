// recgw_purge_log_lag_seconds says how long ago the last complete read of the purge log began:
// renewed by each poll while Redis answers, and growing while it does not (docs/purge.md,
// "The purge guarantee": past cache.purge.maxLag, L1 is not trusted).
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { startHeldUpstream } from '../../helpers/held-upstream.js';
import { startPurgeFleet } from '../../helpers/purge-fleet.js';
import { startPrivateRedis, waitFor } from '../../helpers/redis.js';
import type { TestGateway } from '../../helpers/gateway.js';

async function lagSeconds(gw: TestGateway): Promise<number> {
  const text = (await gw.admin('/metrics')).text;
  const match = /^recgw_purge_log_lag_seconds (\S+)$/m.exec(text);
  if (match === null) throw new Error('recgw_purge_log_lag_seconds not exported');
  return Number(match[1]);
}

void t.test(
  'the purge-log lag is renewed by every poll with Redis up and grows while it is gone',
  async (t) => {
    const redis = await startPrivateRedis(t);
    const upstream = await startHeldUpstream(t, 1);
    const [gw] = (await startPurgeFleet(t, redis, upstream, 1, {
      cache: { purge: { pollInterval: '200ms' } },
    })) as [TestGateway];
    // A lag of L seconds read at T says the last complete read began at T - L. No bound on how
    // soon a poll runs (a loaded host delays timers); instead, reads keep beginning after any
    // moment we mark, which a gateway that stopped polling would not show.
    for (let round = 0; round < 3; round++) {
      const mark = performance.now();
      let lag = Number.NaN;
      await waitFor(
        async () => {
          lag = await lagSeconds(gw);
          return lag >= 0 && lag < (performance.now() - mark) / 1000;
        },
        10_000,
        'a complete read of the purge log begun after the mark',
      );
      t.pass(`round ${round}: a read began after the mark (lag ${lag} s, poll every 0.2 s)`);
    }
    await redis.stop();
    // Redis is gone from here: every complete read began before this moment.
    const stopped = performance.now();
    await sleep(1500);
    const atLeast = (performance.now() - stopped) / 1000;
    const down = await lagSeconds(gw);
    t.ok(down >= atLeast, `${atLeast.toFixed(2)} s after Redis stopped, the lag is ${down} s`);
  },
);
