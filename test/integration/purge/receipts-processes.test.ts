// Purge receipts across real gateway processes with two workers each, on one real Redis
// (DESIGN A10). Invariants: a receipt's 200 names every live worker of every process; a process
// frozen with SIGSTOP (its primary and workers) cannot acknowledge, so a purge with a 1 s timeout
// answers 202 naming exactly its workers; once resumed they apply the purge and the next receipt
// is 200 again.
import t from 'tap';
import { Redis } from 'ioredis';
import { request } from 'undici';
import { startPrivateRedis, waitFor } from '../../helpers/redis.js';
import { startSimulator } from '../../../src/sim/server.js';
import { startWorkers, type WorkersGateway } from '../observability/gateway-process.js';
import { appliedPurgesKey, liveInstancesKey } from '../../../src/redis/key-layout.js';
import { reaches } from '../../../src/purge/log-ids.js';

const ADMIN_TOKEN = 'receipts-admin-token';

async function purge(
  adminPort: number,
  body: Record<string, unknown>,
): Promise<{ status: number; body: any; ms: number }> {
  const started = performance.now();
  const res = await request(`http://127.0.0.1:${adminPort}/admin/purge`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = await res.body.json();
  return { status: res.statusCode, body: json, ms: performance.now() - started };
}

/** The pids of a gateway's primary and of its workers (from its 'worker started' lines). */
function pidsOf(gateway: WorkersGateway): number[] {
  const workers = gateway.gw
    .lines()
    .filter((line) => line['msg'] === 'worker started')
    .map((line) => Number(line['pid']));
  return [gateway.gw.child.pid!, ...workers];
}

void t.test('receipts over 2 processes x 2 workers; one process stopped is named', async (t) => {
  const redis = await startPrivateRedis(t);
  const probe = new Redis(redis.url);
  t.teardown(() => probe.disconnect());
  const sim = await startSimulator({ workspaces: ['acme'], recordingsPerWorkspace: 2 });
  t.teardown(() => sim.close());
  const env = (id: string): Record<string, string> => ({
    ADMIN_TOKEN,
    UPSTREAM_URL: sim.baseUrlTemplate,
    REDIS_URL: redis.url,
    INSTANCE_ID: id,
  });
  const a = await startWorkers(t, env('gw-a'));
  const b = await startWorkers(t, env('gw-b'));
  const live = liveInstancesKey('recgw');
  await waitFor(async () => (await probe.zcard(live)) === 4, 15_000, 'four workers live');
  t.same(
    (await probe.zrange(live, 0, -1)).sort(),
    ['gw-a/worker-1', 'gw-a/worker-2', 'gw-b/worker-1', 'gw-b/worker-2'],
    'each worker is named by its instance and slot',
  );

  for (const via of [a, b]) {
    const answer = await purge(via.adminPort, { workspace: 'acme', wait: 'applied' });
    t.equal(answer.status, 200);
    t.same(answer.body.applied, { instances: 4, of: 4, lagging: [], expired: [] });
    t.comment(`receipt 200 in ${answer.ms.toFixed(1)} ms`);
  }

  // Freeze gw-b whole: its primary and both workers.
  const frozen = pidsOf(b);
  t.equal(frozen.length, 3);
  for (const pid of frozen) process.kill(pid, 'SIGSTOP');
  let resumed = false;
  const resume = (): void => {
    if (resumed) return;
    resumed = true;
    for (const pid of frozen) process.kill(pid, 'SIGCONT');
  };
  t.teardown(resume);
  const stopped = await purge(a.adminPort, { workspace: 'acme', wait: 'applied', timeout: '1s' });
  t.comment(`receipt with gw-b stopped: ${stopped.status} in ${stopped.ms.toFixed(0)} ms`);
  t.equal(stopped.status, 202, 'the stopped workers have not applied it');
  t.same(stopped.body.applied, {
    instances: 2,
    of: 4,
    lagging: ['gw-b/worker-1', 'gw-b/worker-2'],
    expired: [],
  });
  t.ok(stopped.ms >= 1000, 'it waited for its timeout');
  // Loose bound: the 1 s timeout plus a loaded host's scheduling, never the 10 s forward bound.
  t.ok(stopped.ms < 5000, `answered soon after its timeout (${stopped.ms.toFixed(0)} ms)`);
  const target = (await probe.xrevrange('recgw:purges', '+', '-', 'COUNT', 1))[0]![0];

  resume();
  // Once resumed, gw-b's workers read the log and acknowledge the purge they missed.
  await waitFor(
    async () => {
      const applied = await probe.hmget(
        appliedPurgesKey('recgw'),
        'gw-b/worker-1',
        'gw-b/worker-2',
      );
      return applied.every((id) => id !== null && reaches(id, target));
    },
    10_000,
    'gw-b applied the purge it missed',
  );
  const again = await purge(a.adminPort, { workspace: 'acme', wait: 'applied' });
  t.equal(again.status, 200, 'the next purge is 200 again');
  t.same(again.body.applied, { instances: 4, of: 4, lagging: [], expired: [] });
});
