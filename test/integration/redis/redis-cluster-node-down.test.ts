// One dead Cluster master costs L2 only for the workspaces it holds: on a real three-master
// Cluster, workspaces on the two healthy masters keep reading and writing through the outage.
import t from 'tap';
import { Cluster } from 'ioredis';
import type { WorkspaceId } from '../../../src/brands.js';
import { recordingKey, type Generation } from '../../../src/cache/entry/keys.js';
import { startRedisCluster } from '../../helpers/redis-cluster.js';
import { makeEntry, tierFor } from '../../helpers/redis-tier.js';

const KEY = recordingKey('0b0f3f8e-6c1a-4a62-9a55-1b7d5e1f2a3c');

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
