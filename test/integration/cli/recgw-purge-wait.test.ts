// `recgw purge --wait [--timeout D]` against two gateways on a real Redis: it prints the receipt,
// exits 0 when every live instance applied the purge and 4 (non-zero) on a 202 naming the
// lagging one; --timeout without --wait is a usage error.
import t from 'tap';
import { Redis } from 'ioredis';
import { startPrivateRedis, waitFor } from '../../helpers/redis.js';
import { startSharedGateways } from '../../helpers/shared-gateways.js';
import { liveInstancesKey } from '../../../src/redis/key-layout.js';
import { recgw } from './run-recgw.js';

void t.test('recgw purge --wait prints the receipt; a lagging instance exits 4', async (t) => {
  const redis = await startPrivateRedis(t);
  const probe = new Redis(redis.url);
  t.teardown(() => probe.disconnect());
  const first = await startSharedGateways(t, redis, {
    count: 1,
    config: { server: { instanceId: 'gw-a' } },
  });
  await startSharedGateways(t, redis, { count: 1, config: { server: { instanceId: 'gw-b' } } });
  const live = liveInstancesKey(redis.keyPrefix);
  await waitFor(async () => (await probe.zcard(live)) === 2, 5000, 'both instances live');
  const env = {
    ADMIN_URL: `http://127.0.0.1:${first.gateways[0].adminPort}`,
    ADMIN_TOKEN: 'test-admin-token',
  };

  const done = await recgw(['purge', 'acme', '--wait'], env);
  t.equal(done.code, 0, done.stderr);
  t.match(done.stdout, /^purged workspace acme/m);
  t.match(done.stdout, /^applied by all 2 live instances$/m);
  t.match(done.stdout, /^not durable across a Redis failover: no-replica$/m);
  const json = await recgw(['purge', 'acme', '--wait', '--timeout', '1s', '--json'], env);
  t.equal(json.code, 0, json.stderr);
  t.same(JSON.parse(json.stdout).applied, { instances: 2, of: 2, lagging: [], expired: [] });
  t.equal(JSON.parse(json.stdout).ok, true);

  // A live instance that never applies anything (as one stopped would).
  const nowMs = Number((await probe.time())[0]) * 1000;
  await probe.zadd(live, nowMs + 60_000, 'gw-stopped');
  const lagging = await recgw(['purge', 'acme', '--wait', '--timeout', '300ms'], env);
  t.equal(lagging.code, 4, 'non-zero on a 202');
  t.match(lagging.stdout, /^applied by 2 of 3 live instances; not yet by: gw-stopped$/m);
  const laggingJson = await recgw(['purge', 'acme', '--wait', '--timeout', '300ms', '--json'], env);
  t.equal(laggingJson.code, 4);
  t.equal(JSON.parse(laggingJson.stdout).ok, false);
  t.same(JSON.parse(laggingJson.stdout).applied.lagging, ['gw-stopped']);

  const usage = await recgw(['purge', 'acme', '--timeout', '1s'], env);
  t.equal(usage.code, 2);
  t.match(usage.stderr, /--timeout goes with --wait/);
  const bad = await recgw(['purge', 'acme', '--wait', '--timeout', 'soon'], env);
  t.equal(bad.code, 1, 'the gateway refuses it (400)');
  t.match(bad.stderr, /"timeout" must be a duration/);
});
