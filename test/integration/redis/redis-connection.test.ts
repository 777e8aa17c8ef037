// createRedisClient per topology: url options, a real Sentinel, and a Cluster seeded from the url alone.
import t from 'tap';
import { spawn } from 'node:child_process';
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import type { WorkspaceId } from '../../../src/brands.js';
import { recordingKey } from '../../../src/cache/entry/keys.js';
import {
  createRedisClient,
  reconnectDelay,
  MAX_RECONNECT_DELAY_MS,
} from '../../../src/redis/connection.js';
import { configWith } from '../../../src/config/load.js';
import {
  freePort,
  redisCommand,
  startPrivateRedis,
  stopProcess,
  waitFor,
} from '../../helpers/redis.js';
import { startRedisCluster } from '../../helpers/redis-cluster.js';
import { makeEntry, tierFor } from '../../helpers/redis-tier.js';

const ACME = 'acme' as WorkspaceId;
const KEY = recordingKey('0b0f3f8e-6c1a-4a62-9a55-1b7d5e1f2a3c');

void t.test(
  'a rediss:// url carries credentials, db and TLS; the fail-fast options are set',
  (t) => {
    const config = configWith({
      cache: {
        redis: { url: 'rediss://user:p%40ss@cache.internal:6380/2', commandTimeout: '150ms' },
      },
    }).cache.redis;
    const client = createRedisClient(config) as Redis;
    client.on('error', () => {});
    client.disconnect();
    t.match(client.options, {
      host: 'cache.internal',
      port: 6380,
      username: 'user',
      password: 'p@ss',
      db: 2,
      tls: { servername: 'cache.internal' },
    });
    t.match(client.options, {
      enableOfflineQueue: false,
      commandTimeout: 150,
      maxRetriesPerRequest: 0,
      enableAutoPipelining: true,
    });
    t.end();
  },
);

void t.test('reconnects never give up and back off to a cap', (t) => {
  for (const attempt of [1, 5, 50, 10_000]) {
    const delay = reconnectDelay(attempt);
    t.ok(
      typeof delay === 'number' && delay > 0 && delay <= MAX_RECONNECT_DELAY_MS,
      `attempt ${attempt}: ${delay}ms`,
    );
  }
  t.ok(reconnectDelay(10_000) >= MAX_RECONNECT_DELAY_MS / 2, 'late attempts wait near the cap');
  t.end();
});

void t.test('Sentinel mode finds the master through a real sentinel', async (t) => {
  const master = await startPrivateRedis(t);
  const dir = await mkdtemp(join(tmpdir(), 'recgw-sentinel-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'sentinel.conf');
  await writeFile(
    file,
    `sentinel monitor gw 127.0.0.1 ${master.port} 1\nsentinel resolve-hostnames yes\n`,
  );
  const port = await freePort();
  const sentinel = spawn(
    'redis-server',
    [file, '--sentinel', '--port', String(port), '--bind', '127.0.0.1'],
    { stdio: 'ignore', cwd: dir },
  );
  t.teardown(() => stopProcess(sentinel));
  await waitFor(
    async () => (await redisCommand(port, 'PING')) === '+PONG\r\n',
    5000,
    'the sentinel',
  );
  const { tier } = await tierFor(
    t,
    { nodes: [{ host: '127.0.0.1', port }], keyPrefix: master.keyPrefix },
    { redis: { mode: 'sentinel', sentinelName: 'gw' } },
  );
  const generation = (await tier.loadGeneration(ACME))!;
  await tier.set(ACME, generation, [[KEY, makeEntry()]]);
  t.ok(
    await tier.get(ACME, generation, KEY),
    'stored on and read from the master the sentinel named',
  );
});

void t.test('Cluster mode can be seeded from the url alone', async (t) => {
  const cluster = await startRedisCluster(t);
  const seed = cluster.nodes[0]!;
  const { tier } = await tierFor(
    t,
    { url: `redis://${seed.host}:${seed.port}`, keyPrefix: 'seeded' },
    { redis: { mode: 'cluster' } },
  );
  const generation = (await tier.loadGeneration(ACME))!;
  await tier.set(ACME, generation, [[KEY, makeEntry()]]);
  t.ok(await tier.get(ACME, generation, KEY));
});
