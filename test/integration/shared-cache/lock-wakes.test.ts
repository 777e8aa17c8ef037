// A waiter on another instance's fetch lock is woken by the holder's release (standalone and
// Cluster); a lost wake-up still ends the wait by the waiter's own re-check; a holder that never
// lets go costs a waiter cache.distributedLock.wait, then it fetches itself. Events are counted
// (fetches at the upstream, lock waits by result), never milliseconds.
import t, { type Test } from 'tap';
import { lockChannel } from '../../../src/redis/key-layout.js';
import { fetchOf, startHeldUpstream, type HeldUpstream } from '../../helpers/held-upstream.js';
import type { Reply, TestGateway } from '../../helpers/gateway.js';
import { getRedis, waitFor } from '../../helpers/redis.js';
import { startRedisCluster } from '../../helpers/redis-cluster.js';
import { metric, startSharedGateways, type SharedRedis } from '../../helpers/shared-gateways.js';

const PATH = '/api/external/v2/recordings/';

async function fleet(t: Test, redis: SharedRedis, upstream: HeldUpstream, wait = '2s', ttl = '5m') {
  const { gateways } = await startSharedGateways(t, redis, {
    config: {
      // Held fetches may stay held for seconds: no upstream timeout cuts them short.
      upstream: {
        baseUrl: upstream.baseUrl,
        retries: 0,
        timeouts: { headers: '30s', body: '30s', deadline: '30s' },
      },
      cache: {
        ttl: { recording: ttl },
        distributedLock: { enabled: true, ttl: '30s', wait },
        // The refreshes here are the stale-while-revalidate ones, started when the test reads an
        // expired entry; refresh-ahead would start others at random just before expiry.
        refreshAhead: false,
      },
    },
  });
  const [a, b] = gateways;
  // Each instance proves the test's key before any lock is in play.
  const proof = upstream.recordings.at(-1)!.id;
  for (const gw of [a, b]) t.equal((await gw.get(PATH + proof)).status, 200, 'key proved');
  return { a, b };
}

/** A's fetch of `id` held at the upstream, and B waiting on A's lock; returns both answers. */
async function waitBehindHeldFetch(
  upstream: HeldUpstream,
  a: TestGateway,
  b: TestGateway,
  id: string,
) {
  upstream.hold = true;
  const first = a.get(PATH + id);
  await waitFor(() => upstream.held.length === 1, 5000, "A's fetch at the upstream");
  const second = b.get(PATH + id);
  await waitFor(() => b.app.l2?.lockWaiters === 1, 5000, "B waiting on A's lock");
  return { first, second };
}

/** Lets A's held fetch go: B must answer with A's value, one upstream fetch for both. */
async function servedFromOneFetch(
  t: Test,
  upstream: HeldUpstream,
  answers: { first: Promise<Reply>; second: Promise<Reply> },
  fetchesBefore: number,
): Promise<Reply> {
  upstream.releaseAll();
  const [fromA, fromB] = await Promise.all([answers.first, answers.second]);
  t.equal(fromB.status, 200);
  t.equal(fetchOf(fromB.json().title), fetchOf(fromA.json().title), "B served A's fetch");
  t.equal(upstream.nextFetch - fetchesBefore, 1, 'one upstream fetch for both instances');
  return fromB;
}

async function waits(gw: TestGateway, result: string): Promise<number> {
  return metric(gw, 'recgw_cache_lock_waits_total', { result });
}

const topologies: Array<[string, (t: Test) => Promise<SharedRedis>]> = [
  ['standalone', (t) => getRedis(t)],
  [
    'Cluster',
    async (t) => {
      const cluster = await startRedisCluster(t);
      return { nodes: cluster.nodes, keyPrefix: `test-lock-${process.pid}` };
    },
  ],
];

for (const [topology, connect] of topologies)
  void t.test(`${topology}: the holder's release wakes a waiter on another instance`, async (t) => {
    const upstream = await startHeldUpstream(t);
    const { a, b } = await fleet(t, await connect(t), upstream);
    const id = upstream.recordings[0]!.id;
    const fetchesBefore = upstream.nextFetch;
    const answers = await waitBehindHeldFetch(upstream, a, b, id);
    const fromB = await servedFromOneFetch(t, upstream, answers, fetchesBefore);
    t.match(fromB.headers['cache-status'], /collapsed/, 'B says it waited on a fetch');
    t.equal(await waits(b, 'woken'), 1, 'the wait ended by the release message');
  });

void t.test(
  "a lost wake-up: the waiter re-checks by itself and serves the holder's value",
  async (t) => {
    const redis = await getRedis(t);
    const upstream = await startHeldUpstream(t);
    const { a, b } = await fleet(t, redis, upstream);
    // B stays connected but no longer hears releases: every wake-up it would get is lost.
    await b.app.redis!.subscriber.unsubscribe(lockChannel(redis.keyPrefix));
    const id = upstream.recordings[1]!.id;
    const fetchesBefore = upstream.nextFetch;
    await servedFromOneFetch(
      t,
      upstream,
      await waitBehindHeldFetch(upstream, a, b, id),
      fetchesBefore,
    );
    t.equal(await waits(b, 'rechecked'), 1, "the wait ended by B's own re-check");
    t.equal(await waits(b, 'woken'), 0, 'no wake-up was heard');
  },
);

void t.test(
  'a holder that never lets go: the waiter fetches itself after cache.distributedLock.wait',
  async (t) => {
    const redis = await getRedis(t);
    const upstream = await startHeldUpstream(t);
    const { a, b } = await fleet(t, redis, upstream, '400ms');
    const id = upstream.recordings[2]!.id;
    const fetchesBefore = upstream.nextFetch;
    const { first, second } = await waitBehindHeldFetch(upstream, a, b, id);
    // A's fetch stays held (its lock lives 30 s): B's wait runs out and B asks the upstream itself.
    await waitFor(() => upstream.held.length === 2, 10_000, "B's own fetch at the upstream");
    t.equal(await waits(b, 'timeout'), 1, 'the wait ended by its bound');
    upstream.releaseAll();
    const [fromA, fromB] = await Promise.all([first, second]);
    t.equal(fromA.status, 200);
    t.equal(fromB.status, 200);
    t.equal(upstream.nextFetch - fetchesBefore, 2, "A's fetch and B's own");
  },
);

void t.test(
  'stale-while-revalidate across the fleet: one refresh fetch; a later refresh takes the value stored meanwhile',
  async (t) => {
    const redis = await getRedis(t);
    const upstream = await startHeldUpstream(t);
    const { a, b } = await fleet(t, redis, upstream, '2s', '1s');
    const id = upstream.recordings[3]!.id;
    const title = async (gw: TestGateway) => fetchOf((await gw.get(PATH + id)).json().title);
    const staleOn = async (gw: TestGateway) => {
      // Past the 1 s TTL, inside staleWhileRevalidate: the first read serves stale and refreshes.
      await waitFor(
        async () => /ttl=-/.test(String((await gw.get(PATH + id)).headers['cache-status'])),
        5000,
        'a stale answer',
      );
    };
    await a.get(PATH + id);
    await b.get(PATH + id); // B holds the same entry, read from L2
    const first = upstream.nextFetch;
    upstream.hold = true;
    await staleOn(a); // A's refresh is held at the upstream, holding the lock
    await waitFor(() => upstream.held.length === 1, 5000, "A's refresh at the upstream");
    await b.get(PATH + id); // stale on B too: B's refresh waits on A's lock
    await waitFor(() => b.app.l2?.lockWaiters === 1, 5000, "B's refresh waiting on A's lock");
    upstream.releaseAll();
    upstream.hold = false;
    await waitFor(async () => (await title(b)) === first, 5000, "B serving A's refresh");
    t.equal(upstream.nextFetch - first, 1, 'one upstream fetch refreshed both instances');
    t.equal(await waits(b, 'woken'), 1, "B's refresh woken by A's release");

    await staleOn(a); // the next expiry: A refreshes at once (nothing held)
    await waitFor(async () => (await title(a)) === first + 1, 5000, 'A serving its new refresh');
    await staleOn(b); // B's entry is the older one: its refresh finds A's value in L2
    await waitFor(async () => (await title(b)) === first + 1, 5000, "B serving A's new refresh");
    t.equal(upstream.nextFetch - first, 2, 'no fetch of its own for B');
  },
);
