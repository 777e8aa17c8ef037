// recgw_purge_log_lag_seconds says how long ago the last complete read of the purge log began:
// under cache.purge.pollInterval while Redis answers, and growing while it does not (docs/purge.md,
// "The purge guarantee": past cache.purge.maxLag, L1 is not trusted).
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { startHeldUpstream } from '../../helpers/held-upstream.js';
import { startPurgeFleet } from '../../helpers/purge-fleet.js';
import { startPrivateRedis } from '../../helpers/redis.js';
import type { TestGateway } from '../../helpers/gateway.js';

async function lagSeconds(gw: TestGateway): Promise<number> {
  const text = (await gw.admin('/metrics')).text;
  const match = /^recgw_purge_log_lag_seconds (\S+)$/m.exec(text);
  if (match === null) throw new Error('recgw_purge_log_lag_seconds not exported');
  return Number(match[1]);
}

void t.test(
  'the purge-log lag stays under pollInterval with Redis up and grows while it is gone',
  async (t) => {
    const redis = await startPrivateRedis(t);
    const upstream = await startHeldUpstream(t, 1);
    const [gw] = (await startPurgeFleet(t, redis, upstream, 1, {
      cache: { purge: { pollInterval: '200ms' } },
    })) as [TestGateway];
    await sleep(600);
    const up = await lagSeconds(gw);
    t.ok(up >= 0 && up < 0.5, `with Redis up: ${up} s (poll every 0.2 s)`);
    await redis.stop();
    await sleep(1500);
    const down = await lagSeconds(gw);
    t.ok(down >= 1.2, `1.5 s after Redis stopped: ${down} s`);
  },
);
