// A master of a real 3-master, 3-replica Redis Cluster fails under load from two gateways:
// no request fails, the workspaces of the healthy masters never leave L2, the dead master's
// workspaces come back to L2 once its replica is promoted, and recgw_redis_up (and /readyz) is
// back to 1 on every instance within 5 s of the promotion. L1 is turned off (1 byte), so every
// request reads L2 and a Cache-Status other than a hit is a request L2 did not answer.
// Three ways to fail: SIGKILL (connections refused at once), SIGKILL of the master holding the
// purge log (every instance's log reads stop until the promotion), and SIGSTOP (a hung host:
// nothing refused or reset, commands just get no answer).
import t, { type Test } from 'tap';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { purgeLogKey } from '../../../src/redis/key-layout.js';
import { clusterNodes, isMaster, startRedisCluster } from '../../helpers/redis-cluster.js';
import { waitFor } from '../../helpers/redis.js';
import { metric, startSharedGateways } from '../../helpers/shared-gateways.js';
import type { TestGateway } from '../../helpers/gateway.js';

const calculateSlot = createRequire(import.meta.url)('cluster-key-slot') as (key: string) => number;

const WORKSPACES = Array.from({ length: 12 }, (_, i) => `tenant${i}`);
const PREFIX = 'failover';
/** The Done-when bound: recgw_redis_up back to 1 this long after the promotion. */
const UP_AGAIN_MS = 5000;
/** Requests of one healthy workspace L2 may fail while the cluster reconfigures ("a couple"). */
const HEALTHY_MISSES_ALLOWED = 2;

interface Sample {
  at: number;
  workspace: string;
  gateway: number;
  status: number;
  hit: boolean;
  cacheStatus: string;
}

interface Failure {
  /** Which master: the purge log's own, or the busiest other one. */
  master: 'log' | 'other';
  how: 'kill' | 'freeze';
  /** cache.purge.maxLag (default 5s). */
  maxLag?: string;
}

async function failoverUnderLoad(t: Test, failure: Failure): Promise<void> {
  const cluster = await startRedisCluster(t, {
    requireFullCoverage: false,
    replicas: 1,
    // Short, so the failover takes seconds; the test waits for it however long it takes.
    nodeTimeoutMs: 1000,
  });
  const redis = { nodes: cluster.nodes, keyPrefix: PREFIX };
  const fleet = await startSharedGateways(t, redis, {
    config: {
      // A loaded test machine may stall a healthy command past 100 ms; that says nothing of nodes.
      cache: {
        l1: { maxBytes: 1 },
        redis: { commandTimeout: '500ms' },
        purge: { maxLag: failure.maxLag ?? '5s' },
      },
    },
    simOptions: { workspaces: WORKSPACES, recordingsPerWorkspace: 3 },
  });
  const { sim, gateways } = fleet;

  // Who serves what: each workspace's slot (its hash tag) and the purge log's.
  const topology = await clusterNodes(cluster.nodes[0]!.port);
  const ownerOf = (slot: number): number =>
    topology.find(
      (node) =>
        node.flags.includes('master') &&
        node.slots.some(([first, last]) => slot >= first && slot <= last),
    )!.port;
  const master = new Map(WORKSPACES.map((ws) => [ws, ownerOf(calculateSlot(ws))]));
  const logMaster = ownerOf(calculateSlot(purgeLogKey(PREFIX)));
  // The purge log's master, or the one with the most workspaces among the others.
  const candidates = [...new Set(master.values())].filter((port) =>
    failure.master === 'log' ? port === logMaster : port !== logMaster,
  );
  const doomed = candidates.sort(
    (a, b) =>
      WORKSPACES.filter((ws) => master.get(ws) === b).length -
      WORKSPACES.filter((ws) => master.get(ws) === a).length,
  )[0]!;
  const doomedId = topology.find((node) => node.port === doomed)!.id;
  const replica = topology.find((node) => node.masterId === doomedId)!.port;
  const lost = WORKSPACES.filter((ws) => master.get(ws) === doomed);
  const healthy = WORKSPACES.filter((ws) => master.get(ws) !== doomed);
  t.ok(lost.length > 0 && healthy.length > 0, `${lost.length} lost, ${healthy.length} healthy`);
  t.ok(
    new Set(healthy.map((ws) => master.get(ws))).size === 2,
    'the healthy workspaces span both other masters',
  );

  const recording = (ws: string): string => `/api/external/v2/recordings/${sim.data[ws]![0]!.id}`;
  const samples: Sample[] = [];
  const ask = async (gw: TestGateway, index: number, ws: string): Promise<Sample> => {
    const reply = await gw.get(recording(ws), { workspace: ws });
    const status = String(reply.headers['cache-status'] ?? '');
    return {
      at: performance.now(),
      workspace: ws,
      gateway: index,
      status: reply.status,
      cacheStatus: status,
      hit: reply.status === 200 && /; hit\b/.test(status),
    };
  };

  // Warm: every workspace in L2, and each gateway reading it back as a hit.
  let cold: Sample[] = [];
  const warmUntil = performance.now() + 10_000;
  do {
    const round = await Promise.all(
      gateways.flatMap((gw, i) => WORKSPACES.map((ws) => ask(gw, i, ws))),
    );
    cold = round.filter((sample) => !sample.hit);
  } while (cold.length > 0 && performance.now() < warmUntil);
  t.same(
    cold.map(({ workspace, gateway, cacheStatus }) => ({ workspace, gateway, cacheStatus })),
    [],
    'before the kill, every workspace is served from L2 by both gateways',
  );
  if (cold.length > 0) return;

  // Steady load: each gateway asks for every workspace, round after round.
  let loading = true;
  const load = gateways.map(async (gw, index) => {
    while (loading) {
      samples.push(...(await Promise.all(WORKSPACES.map((ws) => ask(gw, index, ws)))));
      await sleep(20);
    }
  });

  await sleep(500);
  const killedAt = performance.now();
  if (failure.how === 'kill') await cluster.kill(doomed);
  else cluster.freeze(doomed);
  // The failover takes its natural time (node timeout, election); everything after is timed from it.
  // Meanwhile every instance says so: redis_up 0, and the dead master's slots counted down.
  const doomedSlots = topology
    .find((node) => node.port === doomed)!
    .slots.reduce((sum, [first, last]) => sum + last - first + 1, 0);
  const sawDown = gateways.map(() => ({ up: 1, slotsDown: 0 }));
  await waitFor(
    async () => {
      await Promise.all(
        gateways.map(async (gw, index) => {
          const seen = sawDown[index]!;
          seen.up = Math.min(seen.up, await metric(gw, 'recgw_redis_up'));
          seen.slotsDown = Math.max(
            seen.slotsDown,
            await metric(gw, 'recgw_redis_cluster_slots_down'),
          );
        }),
      );
      return isMaster(replica);
    },
    60_000,
    `replica ${replica} promoted`,
  );
  const promotedAt = performance.now();

  // recgw_redis_up on every instance, polled until the bound (and a little past it, to report).
  const upAgain = await Promise.all(
    gateways.map(async (gw) => {
      while (performance.now() < promotedAt + UP_AGAIN_MS + 2000) {
        if ((await metric(gw, 'recgw_redis_up')) === 1) return performance.now() - promotedAt;
        await sleep(50);
      }
      return Infinity;
    }),
  );
  // Load goes on until the dead master's workspaces are back in L2, and a while longer.
  const settleUntil = Math.max(performance.now(), promotedAt + UP_AGAIN_MS) + 1000;
  while (performance.now() < settleUntil) await sleep(100);
  loading = false;
  await Promise.all(load);

  const after = samples.filter((sample) => sample.at >= killedAt);
  t.same(
    after
      .filter((sample) => sample.status !== 200)
      .map(({ workspace, status }) => ({ workspace, status })),
    [],
    `no request failed (${after.length} after the kill)`,
  );

  const misses = (ws: string): Sample[] => after.filter((s) => s.workspace === ws && !s.hit);
  const span = (list: Sample[]): string =>
    list.length === 0
      ? 'never'
      : `${Math.round(list[0]!.at - killedAt)}-${Math.round(list.at(-1)!.at - killedAt)} ms after the kill`;
  for (const ws of healthy) {
    const missed = misses(ws);
    t.ok(
      missed.length <= HEALTHY_MISSES_ALLOWED,
      `${ws} (healthy master ${master.get(ws)}) kept L2: ${missed.length} of ${after.filter((s) => s.workspace === ws).length} requests not from L2 (${span(missed)})`,
    );
  }
  for (const ws of lost) {
    const back = after.filter((s) => s.workspace === ws && s.at >= promotedAt + UP_AGAIN_MS);
    t.ok(
      back.length > 0 && back.every((s) => s.hit),
      `${ws} (dead master) back in L2 after the promotion: missed ${span(misses(ws))}`,
    );
  }
  t.comment(`promotion ${Math.round(promotedAt - killedAt)} ms after the kill`);
  gateways.forEach((gw, index) => {
    t.ok(
      upAgain[index]! <= UP_AGAIN_MS,
      `gateway ${index}: recgw_redis_up back to 1 ${Math.round(upAgain[index]!)} ms after the promotion`,
    );
  });
  for (const [index, gw] of gateways.entries()) {
    t.same(
      sawDown[index],
      { up: 0, slotsDown: doomedSlots },
      `gateway ${index} reported the outage: recgw_redis_up 0, the dead master's ${doomedSlots} slots down`,
    );
    t.equal(await metric(gw, 'recgw_redis_cluster_slots_down'), 0, 'no slot down after it');
    t.match((await gw.admin('/readyz')).json(), { status: 'ready', redis: 'up' }, '/readyz up');
  }
}

void t.test('a master SIGKILLed under load costs L2 only for its own slots', (t) =>
  failoverUnderLoad(t, { master: 'other', how: 'kill' }),
);

// Every instance reads the purge log from this master: while it is away no purge can complete
// (its log entry cannot be written), and generations stay trusted for cache.purge.maxLag, set
// here above the failover's length as docs/redis.md asks.
void t.test("the purge log's master SIGKILLed under load", (t) =>
  failoverUnderLoad(t, { master: 'log', how: 'kill', maxLag: '30s' }),
);

void t.test('a master that hangs (SIGSTOP) under load costs L2 only for its own slots', (t) =>
  failoverUnderLoad(t, { master: 'other', how: 'freeze' }),
);
