// Purge receipts over real Redis and real sockets, three gateway apps in this process (DESIGN
// A10). Invariant: a purge with "wait": "applied" is answered 200 only once every live instance
// has recorded that it applied the purge's log entry, and names the instances in the answer;
// without "wait" the answer is as before and no one listens for acknowledgements.
import t, { type Test } from 'tap';
import { Redis } from 'ioredis';
import { startPrivateRedis } from '../../helpers/redis.js';
import { purge, startSharedGateways, type SharedFleet } from '../../helpers/shared-gateways.js';
import { waitFor } from '../../helpers/redis.js';
import type { TestGateway } from '../../helpers/gateway.js';
import {
  appliedChannel,
  appliedPurgesKey,
  liveInstancesKey,
  purgeLogKey,
} from '../../../src/redis/key-layout.js';
import { reaches } from '../../../src/purge/log-ids.js';

/** Waits until the live-instances set holds `count` instances. */
async function waitForLive(probe: Redis, live: string, count: number, what: string): Promise<void> {
  await waitFor(async () => (await probe.zcard(live)) === count, 5000, what);
}

/** A private Redis, a client of the test's own on it, and one app (gw-a) that Redis counts live. */
async function startOneLiveApp(
  t: Test,
): Promise<{ prefix: string; probe: Redis; gw: TestGateway; live: string }> {
  const redis = await startPrivateRedis(t);
  const probe = new Redis(redis.url);
  t.teardown(() => probe.disconnect());
  const fleet = await startSharedGateways(t, redis, {
    count: 1,
    config: { server: { instanceId: 'gw-a' } },
  });
  const live = liveInstancesKey(redis.keyPrefix);
  await waitForLive(probe, live, 1, 'gw-a live');
  return { prefix: redis.keyPrefix, probe, gw: fleet.gateways[0], live };
}

void t.test('receipts: 200 once every live instance applied the purge', async (t) => {
  const redis = await startPrivateRedis(t);
  const probe = new Redis(redis.url);
  t.teardown(() => probe.disconnect());
  const fleets: SharedFleet[] = [];
  // Each app names itself; three apps in one process would otherwise share hostname-pid.
  for (const name of ['gw-a', 'gw-b', 'gw-c'])
    fleets.push(
      await startSharedGateways(t, redis, {
        count: 1,
        config: { server: { instanceId: name } },
      }),
    );
  const [a, b, c] = fleets.map((fleet) => fleet.gateways[0]);
  const live = liveInstancesKey(redis.keyPrefix);
  await waitForLive(probe, live, 3, 'three instances live');

  // Without "wait": the answer is as before, and no acknowledgement is listened for.
  const plain = await purge(a!, { workspace: 'acme' });
  t.equal(plain.status, 200);
  t.equal(plain.json().applied, undefined, 'no receipt without wait');
  t.same(
    await probe.pubsub('NUMSUB', appliedChannel(redis.keyPrefix)),
    [appliedChannel(redis.keyPrefix), 0],
    'nobody subscribed to acknowledgements before a purge waited',
  );

  for (const [via, gw] of [
    ['a', a],
    ['b', b],
    ['c', c],
  ] as const) {
    const answer = await purge(gw!, { workspace: 'acme', wait: 'applied' });
    t.equal(answer.status, 200, `through ${via}`);
    t.same(answer.json().applied, { instances: 3, of: 3, lagging: [], expired: [] });
    t.equal(answer.json().durable, false, 'a standalone Redis without a replica');
    t.equal(answer.json().durable_reason, 'no-replica');
    // The 200 means each instance recorded an entry at or after the purge's.
    const tip = (await probe.xrevrange(`${redis.keyPrefix}:purges`, '+', '-', 'COUNT', 1))[0]![0];
    const applied = await probe.hgetall(`${redis.keyPrefix}:{purge-receipts}:applied`);
    for (const name of ['gw-a', 'gw-b', 'gw-c'])
      t.ok(reaches(applied[name] ?? '', tip), `${name} applied ${tip} (has ${applied[name]})`);
  }

  // Every form takes it.
  for (const body of [
    { workspace: 'acme', lists: true },
    { workspace: 'acme', page_number: 1, page_size: 2 },
    { workspace: 'acme', recording: '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0' },
    { workspace: 'acme', folder_id: 'f1', soft: true },
    { workspace: 'acme', tag_id: 't1' },
  ]) {
    const answer = await purge(b!, { ...body, wait: 'applied', timeout: '1s' });
    t.equal(answer.status, 200, JSON.stringify(body));
    t.same(answer.json().applied.lagging, []);
    t.equal(answer.json().applied.of, 3);
  }

  // An instance that leaves (closed) is no longer waited for, and is not reported expired.
  await c!.app.close();
  await waitForLive(probe, live, 2, 'c left');
  const after = await purge(a!, { workspace: 'acme', wait: 'applied' });
  t.equal(after.status, 200);
  t.same(after.json().applied, { instances: 2, of: 2, lagging: [], expired: [] });
});

void t.test(
  'receipts: an instance whose liveness expired drops out of "of" and is named',
  async (t) => {
    const { probe, gw, live } = await startOneLiveApp(t);
    // A gone instance that never acknowledged: live (expiring in the future), then expired.
    const nowMs = Number((await probe.time())[0]) * 1000;
    await probe.zadd(live, nowMs + 60_000, 'ghost');
    const lagging = await purge(gw, {
      workspace: 'acme',
      wait: 'applied',
      timeout: '300ms',
    });
    t.equal(lagging.status, 202, 'a live instance that never applied it: 202');
    t.same(lagging.json().applied, { instances: 1, of: 2, lagging: ['ghost'], expired: [] });
    await probe.zadd(live, nowMs - 1000, 'ghost');
    const dropped = await purge(gw, { workspace: 'acme', wait: 'applied' });
    t.equal(dropped.status, 200);
    t.same(dropped.json().applied, { instances: 1, of: 1, lagging: [], expired: ['ghost'] });
  },
);

void t.test(
  'receipts: an acknowledgement counts from its announcement, from Redis when the announcement is lost, and from an announcement naming no entry',
  async (t) => {
    const { prefix, probe, gw, live } = await startOneLiveApp(t);
    const nowMs = Number((await probe.time())[0]) * 1000;
    // An instance played by the test: live, acknowledging only as each case says.
    await probe.zadd(live, nowMs + 60_000, 'ghost');
    const tip = async (): Promise<string> =>
      (await probe.xrevrange(purgeLogKey(prefix), '+', '-', 'COUNT', 1))[0]?.[0] ?? '0-0';
    const cases: Array<[string, (entry: string) => Promise<unknown>]> = [
      // Redis's hash never says so: only the message can have counted.
      ['announced', (entry) => probe.publish(appliedChannel(prefix), `ghost ${entry}`)],
      // Recorded, never announced: the periodic re-read finds it.
      [
        'recorded, the announcement lost',
        (entry) => probe.hset(appliedPurgesKey(prefix), 'ghost', entry),
      ],
      // An older release's announcement (the instance alone): a hint to re-read.
      [
        'recorded, announced without its entry',
        async (entry) => {
          await probe.hset(appliedPurgesKey(prefix), 'ghost', entry);
          await probe.publish(appliedChannel(prefix), 'ghost');
        },
      ],
    ];
    for (const [how, acknowledge] of cases) {
      await probe.hdel(appliedPurgesKey(prefix), 'ghost');
      const before = await tip();
      const answer = purge(gw, {
        workspace: 'acme',
        wait: 'applied',
        timeout: '10s',
      });
      const asked = performance.now();
      await waitFor(async () => (await tip()) !== before, 5000, 'the purge in the log');
      // Waited for until then: it has applied nothing of the purge.
      await acknowledge(await tip());
      const receipt = await answer;
      const waited = performance.now() - asked;
      t.equal(receipt.status, 200, how);
      // The timeout's own last read would find it too: answered well before it, it was counted
      // as it came (a re-read comes every 100 ms; 9 s leaves a loaded host all the room it needs).
      t.ok(waited < 9000, `${how}: answered before the timeout (${waited.toFixed(0)} ms)`);
      t.same(receipt.json().applied, { instances: 2, of: 2, lagging: [], expired: [] }, how);
    }
  },
);

void t.test('receipts: bad wait or timeout is a 400 and purges nothing', async (t) => {
  const redis = await startPrivateRedis(t);
  const probe = new Redis(redis.url);
  t.teardown(() => probe.disconnect());
  const fleet = await startSharedGateways(t, redis, { count: 1 });
  const before = await probe.xlen(`${redis.keyPrefix}:purges`);
  for (const [body, message] of [
    [{ workspace: 'acme', wait: 'yes' }, /"wait" must be "applied"/],
    [{ workspace: 'acme', wait: true }, /"wait" must be "applied"/],
    [{ workspace: 'acme', timeout: '1s' }, /"timeout" needs "wait"/],
    [{ workspace: 'acme', wait: 'applied', timeout: '11s' }, /at most 10s/],
    [{ workspace: 'acme', wait: 'applied', timeout: 'soon' }, /"timeout" must be a duration/],
    [{ workspace: 'acme', wait: 'applied', timeout: 2 }, /"timeout" must be a duration/],
  ] as const) {
    const answer = await purge(fleet.gateways[0], body);
    t.equal(answer.status, 400, JSON.stringify(body));
    t.match(answer.json().error, message);
    t.equal(answer.json().code, 'BAD_REQUEST');
  }
  t.equal(await probe.xlen(`${redis.keyPrefix}:purges`), before, 'no purge was logged');
});
