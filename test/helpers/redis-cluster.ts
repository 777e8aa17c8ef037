/**
 * A real three-master Redis Cluster on loopback for tests: three redis-server processes (six with
 * a replica each) joined with `redis-cli --cluster create`, ready once every node reports
 * cluster_state:ok and, with replicas, every replica has synced with its master.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  freePort,
  redisCommand,
  spawnRedisServer,
  stopProcess,
  waitFor,
  type TestLike,
} from './redis.js';

const run = promisify(execFile);

/** A running cluster: its seed nodes, and a stop for tests that want it gone early. */
export interface TestCluster {
  /** Every node, masters first (the order `redis-cli --cluster create` was given). */
  nodes: Array<{ host: string; port: number }>;
  stop(): Promise<void>;
  /** Kills one node's process with SIGKILL (as a crash would). */
  kill(port: number): Promise<void>;
  /**
   * Stops one node's process with SIGSTOP: its sockets stay open and nothing answers, as when a
   * host hangs or drops off the network (no connection is refused or reset). Stopped in teardown.
   */
  freeze(port: number): void;
}

/** One line of CLUSTER NODES. */
export interface ClusterNodeLine {
  id: string;
  port: number;
  flags: string[];
  /** The master's id for a replica, else null. */
  masterId: string | null;
  /** Slot ranges served, as [first, last]. */
  slots: Array<[number, number]>;
}

/** Cluster options for a test. */
export interface TestClusterOptions {
  /**
   * `cluster-require-full-coverage` (Redis's default: yes, and then one dead master stops the
   * whole cluster answering once it is marked failed).
   */
  requireFullCoverage?: boolean;
  /** Replicas per master: 0 (default) or 1. */
  replicas?: 0 | 1;
  /** `cluster-node-timeout` in ms (default 2000): how long a node may be unreachable before it is failed. */
  nodeTimeoutMs?: number;
}

/** Starts a 3-master cluster (with `options.replicas` replicas each); torn down after the test. */
export async function startRedisCluster(
  t: TestLike,
  options: TestClusterOptions = {},
): Promise<TestCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'recgw-cluster-'));
  const children: ChildProcess[] = [];
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await Promise.all(children.map(stopProcess));
    await rm(dir, { recursive: true, force: true });
  };
  t.teardown(stop);

  const nodes: Array<{ host: string; port: number }> = [];
  const taken = new Set<number>();
  const replicas = options.replicas ?? 0;
  for (let i = 0; i < 3 * (1 + replicas); i++) {
    const port = await distinctFreePort(taken);
    // The cluster bus port is chosen too: its default, port + 10000, was never checked, and may
    // be held by another test's server or by an outgoing connection.
    const busPort = await distinctFreePort(taken);
    const coverage =
      options.requireFullCoverage === false ? ['--cluster-require-full-coverage', 'no'] : [];
    const args = [
      ...coverage,
      '--cluster-enabled',
      'yes',
      '--cluster-port',
      String(busPort),
      '--cluster-config-file',
      join(dir, `nodes-${port}.conf`),
      '--cluster-node-timeout',
      String(options.nodeTimeoutMs ?? 2000),
    ];
    children.push(await spawnRedisServer(port, args, dir));
    nodes.push({ host: '127.0.0.1', port });
  }
  await run(
    'redis-cli',
    [
      '--cluster',
      'create',
      ...nodes.map(({ host, port }) => `${host}:${port}`),
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ],
    {
      timeout: 15_000,
    },
  );
  await waitFor(
    async () => {
      const states = await Promise.all(nodes.map(({ port }) => redisCommand(port, 'CLUSTER INFO')));
      return states.every((info) => info?.includes('cluster_state:ok') === true);
    },
    15_000,
    'cluster_state:ok on every node',
  );
  if (replicas > 0)
    await waitFor(
      async () => {
        const lines = await clusterNodes(nodes[0]!.port);
        const masters = lines.filter((line) => line.flags.includes('master'));
        const replicaLines = lines.filter((line) => line.flags.includes('slave'));
        if (masters.length !== 3 || replicaLines.length !== 3 * replicas) return false;
        // Synced: a replica that has not finished its first sync cannot be promoted.
        const infos = await Promise.all(
          replicaLines.map(({ port }) => redisCommand(port, 'INFO replication')),
        );
        return infos.every((info) => info?.includes('master_link_status:up') === true);
      },
      15_000,
      'every replica in sync',
    );
  const kill = async (port: number): Promise<void> => {
    const index = nodes.findIndex((node) => node.port === port);
    const child = children[index];
    if (child !== undefined) await stopProcess(child);
  };
  const freeze = (port: number): void => {
    const index = nodes.findIndex((node) => node.port === port);
    children[index]?.kill('SIGSTOP');
  };
  return { nodes, stop, kill, freeze };
}

/** A free port not among `taken`, which it joins. */
async function distinctFreePort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (!taken.has(port)) {
      taken.add(port);
      return port;
    }
  }
}

/** CLUSTER NODES as one node sees it (empty when it does not answer). */
export async function clusterNodes(port: number): Promise<ClusterNodeLine[]> {
  const reply = await redisCommand(port, 'CLUSTER NODES');
  if (reply === undefined || !reply.startsWith('$')) return [];
  const body = reply.slice(reply.indexOf('\r\n') + 2);
  const lines: ClusterNodeLine[] = [];
  for (const raw of body.split('\n')) {
    const fields = raw.trim().split(' ');
    if (fields.length < 8) continue;
    const [id, address, flags, master] = fields as [string, string, string, string];
    const slots: Array<[number, number]> = [];
    for (const range of fields.slice(8)) {
      if (range.startsWith('[')) continue; // a slot being migrated
      const [first, last] = range.split('-').map(Number) as [number, number | undefined];
      slots.push([first, last ?? first]);
    }
    lines.push({
      id,
      port: Number(address.split('@')[0]!.split(':').at(-1)),
      flags: flags.split(','),
      masterId: master === '-' ? null : master,
      slots,
    });
  }
  return lines;
}

/** True once `port` answers INFO replication with role:master. */
export async function isMaster(port: number): Promise<boolean> {
  return (await redisCommand(port, 'INFO replication'))?.includes('role:master') === true;
}
