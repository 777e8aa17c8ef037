// Durable purges (DESIGN A10) over a real master, replica and Sentinel. Invariant: after a purge
// answered 200 with "durable": true, the master failing over to its replica loses nothing of it:
// no instance, including one started after the failover, serves a value from before the purge.
// The replica replicates through a proxy that holds what the master sends while the purge is
// made and releases it 300 ms later, so the purge can only have reached the replica if the answer
// waited for its acknowledgement; the master is killed the moment the answer arrives, and the
// proxy's connection with it, losing whatever it still held. The Cluster case does the same to
// the replica of the master holding the workspace and the purge log (that master announces the
// proxy's port; only the replication stream is held). Either fails with the WAIT removed.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import {
  freePort,
  redisCommand,
  spawnRedisServer,
  stopProcess,
  waitFor,
} from '../../helpers/redis.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { purge } from '../../helpers/shared-gateways.js';
import { startTcpProxy } from '../../helpers/tcp-proxy.js';
import { clusterNodes, startRedisCluster } from '../../helpers/redis-cluster.js';
import { purgeLogKey } from '../../../src/redis/key-layout.js';
import { createRequire } from 'node:module';
import { startSimulator } from '../../../src/sim/server.js';

const calculateSlot = createRequire(import.meta.url)('cluster-key-slot') as (key: string) => number;

/** Waits until the replica on `replicaPort` has replicated everything its master has sent. */
async function replicaCaughtUp(replicaPort: number, masterPort: number): Promise<void> {
  const offset = async (port: number, field: string): Promise<number> =>
    Number(
      new RegExp(`${field}:(\\d+)`).exec(
        (await redisCommand(port, 'INFO replication')) ?? '',
      )?.[1] ?? -1,
    );
  await waitFor(
    async () =>
      (await offset(replicaPort, 'slave_repl_offset')) >=
      (await offset(masterPort, 'master_repl_offset')),
    5000,
    'the replica to hold the cached value',
  );
}

async function readRecording(gw: TestGateway, id: string): Promise<string> {
  const reply = await gw.get(`/api/external/v2/recordings/${id}`);
  if (reply.status !== 200) throw new Error(`read answered ${reply.status}: ${reply.text}`);
  return (reply.json() as { updated_at: string }).updated_at;
}

void t.test('a durable purge survives the master failing over to its replica', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'recgw-durable-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const [masterPort, replicaPort, sentinelPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  // In a directory of the test's own: a replica writes the RDB it receives to its cwd.
  const master = await spawnRedisServer(masterPort, [], dir);
  t.teardown(() => stopProcess(master));
  const link = await startTcpProxy({ host: '127.0.0.1', port: masterPort });
  t.teardown(() => link.close());
  const replica = await spawnRedisServer(
    replicaPort,
    ['--replicaof', '127.0.0.1', String(link.port)],
    dir,
  );
  t.teardown(() => stopProcess(replica));
  await waitFor(
    async () =>
      ((await redisCommand(replicaPort, 'INFO replication')) ?? '').includes(
        'master_link_status:up',
      ),
    10_000,
    'the replica in sync',
  );
  const file = join(dir, 'sentinel.conf');
  await writeFile(
    file,
    [
      `sentinel monitor gw 127.0.0.1 ${masterPort} 1`,
      'sentinel down-after-milliseconds gw 500',
      'sentinel failover-timeout gw 2000',
      '',
    ].join('\n'),
  );
  const sentinel = spawn(
    'redis-server',
    [file, '--sentinel', '--port', String(sentinelPort), '--bind', '127.0.0.1'],
    { stdio: 'ignore', cwd: dir },
  );
  t.teardown(() => stopProcess(sentinel));
  await waitFor(
    async () => (await redisCommand(sentinelPort, 'PING')) === '+PONG\r\n',
    5000,
    'the sentinel',
  );
  const sentinelClient = new Redis(sentinelPort);
  t.teardown(() => sentinelClient.disconnect());
  const masterNamed = async (): Promise<number> => {
    const [, port] = (await sentinelClient.call(
      'SENTINEL',
      'get-master-addr-by-name',
      'gw',
    )) as string[];
    return Number(port);
  };
  // The sentinel must know the replica before the master goes, or it has nothing to promote.
  await waitFor(
    async () =>
      ((await sentinelClient.call('SENTINEL', 'replicas', 'gw')) as unknown[]).length === 1,
    15_000,
    'the sentinel to find the replica',
  );

  const sim = await startSimulator({ workspaces: ['acme'], recordingsPerWorkspace: 3 });
  t.teardown(() => sim.close());
  const config = {
    cache: {
      redis: {
        mode: 'sentinel',
        sentinelName: 'gw',
        nodes: [{ host: '127.0.0.1', port: sentinelPort }],
        keyPrefix: 'durable',
      },
      purge: { replicaTimeout: '5s', maxLag: '30s' },
    },
  };
  const first = await startGateway(t, { sim, config });
  await waitFor(() => first.app.redis?.up === true, 10_000, 'the gateway on the master');
  const id = sim.data['acme']![0]!.id;
  const before = await readRecording(first, id);
  t.equal(await readRecording(first, id), before, 'cached');
  // Stored in Redis, and replicated: the replica holds the cached value before the purge.
  await replicaCaughtUp(replicaPort, masterPort);
  const after = sim.changeRecording('acme', id).updated_at;
  t.not(after, before);

  link.hold();
  const release = setTimeout(() => link.release(), 300);
  t.teardown(() => clearTimeout(release));
  const purged = await purge(first, { workspace: 'acme' });
  master.kill('SIGKILL');
  t.equal(purged.status, 200);
  t.equal(purged.json().durable, true, 'a replica acknowledged the purge');

  clearTimeout(release);
  // The master is gone: its connection through the proxy drops what it still held.
  await waitFor(
    async () =>
      (await redisCommand(replicaPort, 'INFO replication'))?.includes('master_link_status:down') ===
      true,
    5000,
    'the replica to lose its master',
  );
  link.release();
  await waitFor(async () => (await masterNamed()) === replicaPort, 20_000, 'the replica promoted');
  await waitFor(() => first.app.redis?.up === true, 20_000, 'the gateway on the new master');

  t.equal(await readRecording(first, id), after, 'the purging gateway: new data');
  const later = await startGateway(t, { sim, config });
  await waitFor(() => later.app.redis?.up === true, 10_000, 'a new gateway on the new master');
  t.equal(await readRecording(later, id), after, 'a gateway started after the failover: new data');
});

void t.test('a purge no replica acknowledges in time says it is not durable', async (t) => {
  const masterPort = await freePort();
  const replicaPort = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'recgw-durable-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const master = await spawnRedisServer(masterPort, [], dir);
  t.teardown(() => stopProcess(master));
  const link = await startTcpProxy({ host: '127.0.0.1', port: masterPort });
  t.teardown(() => link.close());
  const replica = await spawnRedisServer(
    replicaPort,
    ['--replicaof', '127.0.0.1', String(link.port)],
    dir,
  );
  t.teardown(() => stopProcess(replica));
  await waitFor(
    async () =>
      ((await redisCommand(replicaPort, 'INFO replication')) ?? '').includes(
        'master_link_status:up',
      ),
    10_000,
    'the replica in sync',
  );
  const gw = await startGateway(t, {
    redisUrl: `redis://127.0.0.1:${masterPort}`,
    config: { cache: { redis: { keyPrefix: 'late' }, purge: { replicaTimeout: '300ms' } } },
  });
  await waitFor(() => gw.app.redis?.up === true, 10_000, 'the gateway on Redis');
  const purgeAcme = async (): Promise<{ status: number; body: Record<string, unknown> }> => {
    const reply = await purge(gw, { workspace: 'acme' });
    return { status: reply.status, body: reply.json() as Record<string, unknown> };
  };
  const synced = await purgeAcme();
  t.equal(synced.status, 200);
  t.equal(synced.body['durable'], true, 'a replica in sync acknowledges');
  t.equal(synced.body['durable_reason'], undefined);

  link.hold();
  const started = performance.now();
  const late = await purgeAcme();
  const waited = performance.now() - started;
  t.equal(late.status, 200, 'the purge is made');
  t.equal(late.body['durable'], false, 'but not claimed durable');
  t.equal(late.body['durable_reason'], 'replica-timeout');
  t.ok(waited >= 250, `it waited for the replica (${waited.toFixed(0)} ms)`);
  link.release();
  const again = await purgeAcme();
  t.equal(again.body['durable'], true, 'durable again once the replica caught up');
});

void t.test('Cluster 3+3: a durable purge survives its master failing over', async (t) => {
  const cluster = await startRedisCluster(t, {
    requireFullCoverage: false,
    replicas: 1,
    nodeTimeoutMs: 1000,
  });
  const topology = await clusterNodes(cluster.nodes[0]!.port);
  const ownerOf = (slot: number): number =>
    topology.find(
      (node) =>
        node.flags.includes('master') &&
        node.slots.some(([low, high]) => slot >= low && slot <= high),
    )!.port;
  // A workspace on the purge log's master: killing that one master takes both of the purge's
  // writes (the generation and the log entry), and the other two masters can elect its replica.
  const doomed = ownerOf(calculateSlot(purgeLogKey('durable')));
  const workspace = Array.from({ length: 50 }, (_, i) => `ws${i}`).find(
    (name) => ownerOf(calculateSlot(name)) === doomed,
  )!;
  // The doomed master's replica replicates through a proxy that can hold what the master sends,
  // so the purge can only reach it if the answer waited for its acknowledgement. Cluster nodes
  // reach a master where it announces itself: the master announces the proxy's port, so every
  // client (the gateways too) goes through the proxy, where only the replica's stream is held.
  const doomedId = topology.find((node) => node.port === doomed)!.id;
  const replicaPort = topology.find((node) => node.masterId === doomedId)!.port;
  const link = await startTcpProxy({ host: '127.0.0.1', port: doomed });
  t.teardown(() => link.close());
  await redisCommand(doomed, `CONFIG SET cluster-announce-port ${link.port}`);
  const replication = async (port: number): Promise<string> =>
    (await redisCommand(port, 'INFO replication')) ?? '';
  await waitFor(
    async () => {
      const info = await replication(replicaPort);
      return info.includes(`master_port:${link.port}`) && info.includes('master_link_status:up');
    },
    20_000,
    'the replica replicating through the proxy',
  );
  const sim = await startSimulator({ workspaces: [workspace], recordingsPerWorkspace: 3 });
  t.teardown(() => sim.close());
  const config = {
    cache: {
      redis: {
        url: null,
        mode: 'cluster',
        nodes: cluster.nodes,
        keyPrefix: 'durable',
        commandTimeout: '500ms',
      },
      purge: { replicaTimeout: '2s', maxLag: '30s' },
    },
  };
  const read = async (
    gw: TestGateway,
    id: string,
  ): Promise<{ updatedAt: string; cache: string }> => {
    const reply = await gw.get(`/api/external/v2/recordings/${id}`, { workspace });
    if (reply.status !== 200) throw new Error(`read answered ${reply.status}: ${reply.text}`);
    return {
      updatedAt: (reply.json() as { updated_at: string }).updated_at,
      cache: String(reply.headers['cache-status'] ?? ''),
    };
  };
  const first = await startGateway(t, { sim, config });
  await waitFor(() => first.app.redis?.up === true, 10_000, 'the gateway on the cluster');
  const id = sim.data[workspace]![0]!.id;
  const before = (await read(first, id)).updatedAt;
  t.equal((await read(first, id)).updatedAt, before, 'cached');
  // The replica holds the cached value before the purge: after the failover, only the purge
  // having reached it keeps that value from being served.
  await replicaCaughtUp(replicaPort, doomed);
  const after = sim.changeRecording(workspace, id).updated_at;
  t.not(after, before);

  link.hold('replication');
  const release = setTimeout(() => link.release(), 300);
  t.teardown(() => clearTimeout(release));
  const purged = await purge(first, { workspace });
  // Killed the moment the answer arrives: whatever the proxy still holds for the replica is lost.
  await cluster.kill(doomed);
  clearTimeout(release);
  t.equal(purged.status, 200);
  t.equal(purged.json().durable, true, "the replica of the workspace's master acknowledged");

  const alive = cluster.nodes.filter(({ port }) => port !== doomed);
  await waitFor(
    async () => {
      const infos = await Promise.all(alive.map(({ port }) => redisCommand(port, 'CLUSTER INFO')));
      return infos.every((info) => info?.includes('cluster_state:ok') === true);
    },
    30_000,
    'the replica promoted (cluster_state:ok)',
  );
  // A new instance, seeded with the nodes still running as its configuration would be.
  const later = await startGateway(t, {
    sim,
    config: { cache: { ...config.cache, redis: { ...config.cache.redis, nodes: alive } } },
  });
  await waitFor(() => later.app.redis?.up === true, 20_000, 'a new gateway on the cluster');
  await waitFor(() => first.app.redis?.up === true, 20_000, 'the first gateway on Redis again');
  t.equal((await read(first, id)).updatedAt, after, 'the purging gateway: new data');
  t.equal(
    (await read(later, id)).updatedAt,
    after,
    'a gateway started after the failover: new data',
  );
});
