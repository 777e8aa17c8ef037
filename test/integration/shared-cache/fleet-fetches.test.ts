// Issue 29's fleet: three gateways on one real Redis, a hot recording read about 20 times a second
// on each, cache.ttl.recording 2 s, an upstream answering in 150 ms, for 12 s. Misses and
// stale-while-revalidate refreshes take the key's fetch lock, and waiters on the other instances
// are woken by its release: the fleet asks the upstream about once per expiry.
import t from 'tap';
import { getRedis } from '../../helpers/redis.js';
import { metric, startSharedGateways, upstreamPath } from '../../helpers/shared-gateways.js';
import type { Reply, TestGateway } from '../../helpers/gateway.js';

const RUN_MS = 12_000;
const EVERY_MS = 50;
/** The target: at most one fetch per 80% of the 2 s TTL, for the whole fleet. */
const MAX_FETCHES = 8;

/** What one answer says it was: a hit, a stale serve, or a wait on an upstream fetch. */
function kindOf(reply: Reply): 'hit' | 'stale' | 'waited' {
  const status = String(reply.headers['cache-status'] ?? '');
  if (/fwd=miss|collapsed/.test(status)) return 'waited';
  return /ttl=-/.test(status) ? 'stale' : 'hit';
}

/** Reads `path` on `gw` every EVERY_MS for RUN_MS (open loop: a slow answer delays no later request). */
async function readHot(
  gw: TestGateway,
  path: string,
): Promise<Array<{ at: number; reply: Reply }>> {
  const started = performance.now();
  const answers: Array<Promise<{ at: number; reply: Reply }>> = [];
  for (let sent = 0; sent * EVERY_MS < RUN_MS; sent++) {
    const due = started + sent * EVERY_MS;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
    const at = performance.now() - started;
    answers.push(gw.get(path).then((reply) => ({ at, reply })));
  }
  return Promise.all(answers);
}

void t.test(
  'three gateways, one hot key, TTL 2 s, upstream 150 ms, 12 s: at most 8 upstream fetches, no waiter timed out',
  async (t) => {
    const redis = await getRedis(t);
    const { sim, gateways } = await startSharedGateways(t, redis, {
      count: 3,
      config: { cache: { ttl: { recording: '2s' }, distributedLock: { enabled: true } } },
    });
    const [hot, warm] = sim.data['acme']!;
    const path = `/api/external/v2/recordings/${hot!.id}`;
    // Each instance proves the test's key once, on another recording, before the count starts.
    for (const gw of gateways)
      t.equal((await gw.get(`/api/external/v2/recordings/${warm!.id}`)).status, 200);
    sim.faults.set({ kind: 'latency', ms: 150 }, { path: 'recording' });
    const before = sim.counters.byPath(upstreamPath(hot!.id));

    const runs = await Promise.all(gateways.map((gw) => readHot(gw, path)));
    const fetches = sim.counters.byPath(upstreamPath(hot!.id)) - before;
    const answers = runs.flat();
    t.ok(
      answers.every(({ reply }) => reply.status === 200),
      'every answer 200',
    );
    const stale = answers.filter(({ reply }) => kindOf(reply) === 'stale').length;
    const waited = answers.filter(({ reply }) => kindOf(reply) === 'waited');
    t.comment(
      `${answers.length} answers, ${fetches} upstream fetches, ${stale} stale (${((100 * stale) / answers.length).toFixed(1)}%), ${waited.length} waited on a fetch`,
    );
    t.ok(fetches >= 1 && fetches <= MAX_FETCHES, `${fetches} upstream fetches ≤ ${MAX_FETCHES}`);
    // Only the cold start may wait on the upstream: every later expiry is served stale while one
    // instance refreshes, and the others take its value when its lock's release wakes them.
    const firstStale = Math.min(
      ...answers.filter(({ reply }) => kindOf(reply) === 'stale').map(({ at }) => at),
    );
    t.same(
      waited.filter(({ at }) => at > firstStale),
      [],
      'no answer after the first expiry waited on the upstream',
    );
    let timedOut = 0;
    let woken = 0;
    for (const gw of gateways) {
      timedOut += await metric(gw, 'recgw_cache_lock_waits_total', { result: 'timeout' });
      woken += await metric(gw, 'recgw_cache_lock_waits_total', { result: 'woken' });
    }
    t.equal(timedOut, 0, 'no lock waiter waited out cache.distributedLock.wait');
    t.ok(woken >= 1, `${woken} lock waits ended by the holder's release`);
  },
);
