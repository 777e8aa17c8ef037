// server.workers: 2 with real processes: two workers serve with their own L1, one /metrics counts
// both, a purge without Redis reaches both L1s, SIGHUP reaches both, a killed worker is replaced,
// and SIGTERM drains both before the primary exits 0.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { getFresh } from '../../helpers/fresh-get.js';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { startSimulator } from '../../../src/sim/server.js';
import {
  builtMain,
  spawnGateway,
  startWorkers,
  type GatewayProcess,
} from '../observability/gateway-process.js';

const ADMIN_TOKEN = 'workers-admin-token';

/** `count` GETs one after another, each on its own connection. */
async function getMany(
  count: number,
  port: number,
  path: string,
  key: string,
): Promise<Array<{ status: number; cacheStatus: string }>> {
  const answers = [];
  for (let i = 0; i < count; i++) answers.push(await getFresh(port, path, key));
  return answers;
}

async function scrape(adminPort: number): Promise<string> {
  const res = await request(`http://127.0.0.1:${adminPort}/metrics`);
  return res.body.text();
}

/** The sum of every series of a metric in a Prometheus text exposition. */
function total(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n'))
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `))
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

function workerLines(gw: GatewayProcess, msg: string): Array<Record<string, unknown>> {
  return gw.lines().filter((line) => line['msg'] === msg && typeof line['worker'] === 'number');
}

async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

void t.test(
  'two workers: shared port, own L1s, one /metrics, purge and SIGHUP reach both, a killed worker is replaced, SIGTERM drains both',
  async (t) => {
    const sim = await startSimulator({ workspaces: ['acme'], recordingsPerWorkspace: 5 });
    t.teardown(() => sim.close());
    const key = sim.keys['acme']![0]!;
    const id = sim.data['acme']![0]!.id;
    const path = `/api/external/v2/recordings/${id}`;
    const upstreamPath = `/ws/acme/api/external/v2/recordings/${id}`;
    const file = join(t.testdir(), 'gateway.yaml');
    // No audits (cache.audit): an audit is an upstream fetch, and this test counts them exactly.
    writeFileSync(file, 'signing:\n  minRemaining: 10s\ncache:\n  audit:\n    sampleRatio: 0\n');

    const { gw, port, adminPort } = await startWorkers(t, {
      ADMIN_TOKEN,
      GATEWAY_CONFIG: file,
      UPSTREAM_URL: sim.baseUrlTemplate,
    });
    const pids = new Set(workerLines(gw, 'worker listening').map((line) => line['pid']));
    t.equal(pids.size, 2, 'two worker processes listen');
    t.notOk(pids.has(gw.child.pid), 'neither is the primary');

    // Six requests on six connections: each worker misses once and then answers from its own L1.
    const first = await getMany(6, port, path, key);
    t.same(
      first.map((r) => r.status),
      [200, 200, 200, 200, 200, 200],
    );
    t.equal(
      sim.counters.byPath(upstreamPath),
      2,
      'two upstream fetches: two workers served, each with its own L1',
    );
    t.same(
      first.map((r) => (r.cacheStatus.startsWith('recgw; hit') ? 'hit' : 'miss')),
      ['miss', 'miss', 'hit', 'hit', 'hit', 'hit'],
      'connections alternate between the workers',
    );

    let metrics = await scrape(adminPort);
    t.equal(
      total(metrics, 'recgw_http_requests_total'),
      6,
      'one /metrics counts the requests of both workers',
    );
    t.equal(total(metrics, 'recgw_workers_ready'), 2);
    const hits = metrics
      .split('\n')
      .filter(
        (line) =>
          line.startsWith('recgw_cache_lookups_total{') &&
          line.includes('tier="l1"') &&
          line.includes('result="hit"'),
      );
    t.equal(
      total(hits.join('\n'), 'recgw_cache_lookups_total'),
      4,
      'the L1 hits of both workers, summed',
    );

    // No Redis: only an IPC broadcast can make both workers drop what they hold.
    const purge = await request(`http://127.0.0.1:${adminPort}/admin/purge`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ workspace: 'acme' }),
    });
    t.equal(purge.statusCode, 200, await purge.body.text());
    const second = await getMany(6, port, path, key);
    t.same(
      second.map((r) => r.status),
      [200, 200, 200, 200, 200, 200],
    );
    t.equal(sim.counters.byPath(upstreamPath), 4, 'after the purge both workers fetch again');
    const refused = await request(`http://127.0.0.1:${adminPort}/admin/purge`, {
      method: 'POST',
      headers: { authorization: 'Bearer wrong' },
      body: '{"workspace":"acme"}',
    });
    t.equal(refused.statusCode, 401, 'the workers still judge the token');
    await refused.body.text();
    const ready = await request(`http://127.0.0.1:${adminPort}/readyz`);
    t.equal(ready.statusCode, 200);
    t.match(await ready.body.json(), { status: 'ready', redis: 'not-configured' });

    process.kill(gw.child.pid!, 'SIGHUP');
    await until(
      () =>
        new Set(workerLines(gw, 'configuration reloaded').map((line) => line['worker'])).size === 2,
      'both workers to reload',
    );
    t.pass('SIGHUP reached both workers');

    // A worker killed outright is replaced and counted; the other keeps serving meanwhile. Its
    // counts as of the last scrape stay in the sums, so no counter goes down.
    t.equal(total(await scrape(adminPort), 'recgw_http_requests_total'), 12);
    const victim = [...pids][0] as number;
    process.kill(victim, 'SIGKILL');
    await gw.waitForLine(
      (line) => line['msg'] === 'worker exited; restarting it' && line['pid'] === victim,
    );
    await until(() => workerLines(gw, 'worker listening').length === 3, 'a replacement worker');
    const replacement = workerLines(gw, 'worker listening')[2]!;
    t.notOk(pids.has(replacement['pid']), `a new process (pid ${String(replacement['pid'])})`);
    metrics = await scrape(adminPort);
    t.equal(total(metrics, 'recgw_worker_restarts_total'), 1, 'the restart is counted');
    const third = await getMany(4, port, path, key);
    t.same(
      third.map((r) => r.status),
      [200, 200, 200, 200],
      'both workers serve again',
    );
    t.equal(
      total(await scrape(adminPort), 'recgw_http_requests_total'),
      16,
      "the killed worker's requests still counted",
    );

    process.kill(gw.child.pid!, 'SIGTERM');
    const exit = await gw.exited;
    t.same(exit, { code: 0, signal: null }, 'the primary exits 0');
    t.equal(workerLines(gw, 'shutting down').length, 2, 'both live workers drained');
    t.ok(gw.lines().some((line) => line['msg'] === 'every worker stopped'));
  },
);

void t.test('workers whose primary is killed outright shut themselves down', async (t) => {
  const sim = await startSimulator({ workspaces: ['acme'], recordingsPerWorkspace: 1 });
  t.teardown(() => sim.close());
  const { gw } = await startWorkers(t, { UPSTREAM_URL: sim.baseUrlTemplate });
  const pids = workerLines(gw, 'worker listening').map((line) => line['pid'] as number);
  t.equal(pids.length, 2);
  process.kill(gw.child.pid!, 'SIGKILL');
  const alive = (pid: number): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  await until(() => !pids.some(alive), 'both orphaned workers to exit');
  t.pass('no worker outlives its primary');
});

void t.test(
  'a worker that cannot start (its port is taken) stops the primary with exit 1',
  async (t) => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => taken.close(() => resolve())));
    const port = (taken.address() as AddressInfo).port;
    const gw = spawnGateway(t, await builtMain(), {
      HOST: '127.0.0.1',
      PORT: String(port),
      ADMIN_HOST: '127.0.0.1',
      ADMIN_PORT: '0',
      LOG_LEVEL: 'info',
      WORKERS: '2',
      UPSTREAM_URL: 'http://127.0.0.1:1/{workspace}',
    });
    const exit = await gw.exited;
    t.same(exit, { code: 1, signal: null });
    t.ok(
      gw.lines().some((line) => line['msg'] === 'a worker failed to start; stopping'),
      gw.stdout() + gw.stderr(),
    );
  },
);
