// One dead Cluster master costs L2 only for the workspaces it holds: on a real three-master
// Cluster, workspaces on the two healthy masters keep reading and writing through the outage;
// and once a replica is promoted, the tier is up again without waiting for traffic.
import t from 'tap';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { Cluster } from 'ioredis';
import type { WorkspaceId } from '../../../src/brands.js';
import { recordingKey, type Generation } from '../../../src/cache/entry/keys.js';
import { purgeLogKey } from '../../../src/redis/key-layout.js';
import {
  clusterNodes,
  isMaster,
  startRedisCluster,
  type ClusterNodeLine,
} from '../../helpers/redis-cluster.js';
import { redisCommand, waitFor } from '../../helpers/redis.js';
import { makeEntry, tierFor } from '../../helpers/redis-tier.js';

const calculateSlot = createRequire(import.meta.url)('cluster-key-slot') as (key: string) => number;

const KEY = recordingKey('0b0f3f8e-6c1a-4a62-9a55-1b7d5e1f2a3c');

/** How far a node has come in its master's replication stream (a master: how far it has written). */
async function replicationOffset(port: number): Promise<number> {
  const info = (await redisCommand(port, 'INFO replication')) ?? '';
  return Number(/master_repl_offset:(\d+)/.exec(info)?.[1] ?? -1);
}

void t.test('a dead master takes L2 away only from its own workspaces', async (t) => {
  // Without this, Redis itself stops every master answering once one is marked failed.
  const cluster = await startRedisCluster(t, { requireFullCoverage: false });
  const raw = new Cluster(cluster.nodes);
  t.teardown(() => raw.quit());
  // A generous command timeout: on a loaded test machine a 100 ms one also fails healthy commands,
  // which says nothing about which node failed.
  const { tier, metrics, logs } = await tierFor(
    t,
    { nodes: cluster.nodes, keyPrefix: 'node-down' },
    { redis: { commandTimeout: '500ms' } },
  );
  const workspaces = Array.from({ length: 12 }, (_, i) => `ws${i}` as WorkspaceId);
  const master = new Map<WorkspaceId, string>();
  for (const ws of workspaces) {
    const slot = await raw.cluster('KEYSLOT', ws);
    master.set(ws, raw.slots[slot]![0]!);
  }
  // Values are written only under the generation Redis holds for their workspace.
  const generations = new Map<WorkspaceId, Generation>();
  for (const ws of workspaces) generations.set(ws, (await tier.loadGeneration(ws))!);
  const GEN = (ws: WorkspaceId): Generation => generations.get(ws)!;
  for (const ws of workspaces) await tier.set(ws, GEN(ws), [[KEY, makeEntry({ etag: `"${ws}"` })]]);
  for (const ws of workspaces) t.ok(await tier.get(ws, GEN(ws), KEY), `${ws} cached`);

  const doomed = master.get(workspaces[0]!)!;
  const lost = workspaces.filter((ws) => master.get(ws) === doomed);
  const healthy = workspaces.filter((ws) => master.get(ws) !== doomed);
  t.ok(
    lost.length > 0 && healthy.length > 0,
    `${lost.length} workspaces on the killed master, ${healthy.length} on the others`,
  );
  await cluster.kill(Number(doomed.split(':')[1]));

  // Past cluster-node-timeout (2 s), so the cluster marks the master failed meanwhile.
  let healthyMisses = 0;
  let healthyReads = 0;
  let lostHits = 0;
  const until = Date.now() + 4000;
  while (Date.now() < until) {
    const round = await Promise.all(
      workspaces.map(async (ws) => [ws, await tier.get(ws, GEN(ws), KEY)] as const),
    );
    for (const [ws, value] of round) {
      if (healthy.includes(ws)) {
        healthyReads++;
        if (value === undefined) healthyMisses++;
      } else if (value !== undefined) lostHits++;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.ok(
    healthyMisses <= 2,
    `healthy masters' workspaces kept L2: ${healthyMisses} of ${healthyReads} reads failed`,
    { logs: logs.filter((line) => line['level'] === 40) },
  );
  t.equal(lostHits, 0, "the dead master's workspaces read nothing (nothing stale, nothing stuck)");
  // Writes keep working for the healthy workspaces too.
  const ws = healthy[0]!;
  await tier.set(ws, GEN(ws), [[KEY, makeEntry({ etag: '"after"' })]]);
  const back = await tier.get(ws, GEN(ws), KEY);
  t.equal(
    back?.kind === 'entry' ? back.etag : undefined,
    '"after"',
    'a write after the kill lands',
  );
  const errors = (await metrics.redisErrors.get()).values.reduce((sum, v) => sum + v.value, 0);
  t.ok(errors > 0, `the dead master's failures are counted (${errors})`);
});

void t.test(
  'after a failover with no traffic to the dead master, up comes back by itself',
  async (t) => {
    const cluster = await startRedisCluster(t, {
      requireFullCoverage: false,
      replicas: 1,
      nodeTimeoutMs: 1000,
    });
    const keyPrefix = 'node-down-idle';
    const { tier } = await tierFor(
      t,
      { nodes: cluster.nodes, keyPrefix },
      { redis: { commandTimeout: '500ms' } },
    );
    const topology = await clusterNodes(cluster.nodes[0]!.port);
    const ownerOf = (slot: number): ClusterNodeLine =>
      topology.find(
        (node) =>
          node.flags.includes('master') &&
          node.slots.some(([first, last]) => slot >= first && slot <= last),
      )!;
    const logMaster = ownerOf(calculateSlot(purgeLogKey(keyPrefix)));
    const ws = Array.from({ length: 30 }, (_, i) => `idle${i}` as WorkspaceId).find(
      (name) => ownerOf(calculateSlot(name)).id !== logMaster.id,
    )!;
    const doomed = ownerOf(calculateSlot(ws));
    const replica = topology.find((node) => node.masterId === doomed.id)!.port;
    const generation = (await tier.loadGeneration(ws))!;
    await tier.set(ws, generation, [[KEY, makeEntry()]]);
    // Replication is asynchronous: a value the replica has not received when its master dies is
    // lost by Redis itself. Kill only once the replica has read up to the write.
    const written = await replicationOffset(doomed.port);
    t.ok(written > 0, `the master has written up to offset ${written}`);
    await waitFor(
      async () => (await replicationOffset(replica)) >= written,
      10_000,
      `replica ${replica} caught up`,
    );

    await cluster.kill(doomed.port);
    // Enough failed reads to open the dead master's breaker; then no command goes its way.
    await waitFor(
      async () => {
        await tier.get(ws, generation, KEY);
        return !tier.up;
      },
      10_000,
      'the tier to see the dead master',
    );
    await waitFor(() => isMaster(replica), 60_000, `replica ${replica} promoted`);
    const promotedAt = performance.now();
    await waitFor(() => tier.up, 30_000, 'the tier up again');
    const upAfter = performance.now() - promotedAt;
    t.ok(upAfter <= 5000, `up again ${Math.round(upAfter)} ms after the promotion, idle`);
    t.ok(await tier.get(ws, generation, KEY), 'the workspace reads its value from the new master');
  },
);
