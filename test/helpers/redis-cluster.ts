/**
 * A real three-master Redis Cluster on loopback for tests: three redis-server processes joined
 * with `redis-cli --cluster create`, ready once every node reports cluster_state:ok.
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
  nodes: Array<{ host: string; port: number }>;
  stop(): Promise<void>;
  /** Kills one node's process (as a crash would). */
  kill(port: number): Promise<void>;
}

/** Cluster options for a test. */
export interface TestClusterOptions {
  /**
   * `cluster-require-full-coverage` (Redis's default: yes, and then one dead master stops the
   * whole cluster answering once it is marked failed).
   */
  requireFullCoverage?: boolean;
}

/** Starts a 3-master cluster (no replicas); torn down after the test. */
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
  for (let i = 0; i < 3; i++) {
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
      '2000',
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
      '0',
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
  const kill = async (port: number): Promise<void> => {
    const index = nodes.findIndex((node) => node.port === port);
    const child = children[index];
    if (child !== undefined) await stopProcess(child);
  };
  return { nodes, stop, kill };
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
