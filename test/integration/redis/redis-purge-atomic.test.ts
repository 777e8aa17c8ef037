// A purge moves the generation and announces it in one step: Redis never holds a moved generation that no instance heard of.
import { createConnection, createServer, type Socket } from 'node:net';
import t from 'tap';
import type { WorkspaceId } from '../../../src/brands.js';
import { generationKey } from '../../../src/cache/redis-keys.js';
import type { PurgeEvent } from '../../../src/cache/shared-tier.js';
import { startPrivateRedis, waitFor, type TestLike } from '../../helpers/redis.js';
import { tierFor, untilPurgesHeard } from '../../helpers/redis-tier.js';

const ACME = 'acme' as WorkspaceId;
/** A PUBLISH sent as a command of its own (RESP array whose first element is "publish"). */
const STANDALONE_PUBLISH = /\*\d+\r\n\$7\r\npublish\r\n/i;

/**
 * A TCP proxy to Redis that never forwards a chunk holding a standalone PUBLISH: what a
 * connection lost between two commands looks like to the second one.
 */
async function publishSwallowingProxy(t: TestLike, port: number): Promise<string> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port });
    sockets.add(client).add(upstream);
    client.on('data', (chunk: Buffer) => {
      if (!STANDALONE_PUBLISH.test(chunk.toString('latin1'))) upstream.write(chunk);
    });
    upstream.pipe(client);
    for (const socket of [client, upstream]) {
      socket.on('error', () => {});
      socket.on('close', () => {
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');
  return `redis://127.0.0.1:${address.port}`;
}

void t.test('a purge whose announcement could not be sent as a command of its own still moves and announces together', async (t) => {
  const redis = await startPrivateRedis(t);
  const proxy = await publishSwallowingProxy(t, redis.port);
  const { tier } = await tierFor(t, { url: proxy, keyPrefix: redis.keyPrefix });
  const heard: PurgeEvent[] = [];
  tier.onPurge((event) => heard.push(event));
  // Announcements published directly on Redis bypass the proxy.
  const raw = await untilPurgesHeard(t, redis.url, redis.keyPrefix, () => heard.length > 0);
  heard.length = 0;

  // The old way (MULTI, then PUBLISH as a second command) timed out here with Redis already moved.
  const generation = await tier.purge(ACME, []);
  t.same(generation, { all: 1, list: 0 });
  t.equal(await raw.hget(generationKey(redis.keyPrefix, ACME), 'all'), '1', 'Redis moved');
  await waitFor(() => heard.length === 1, 2000, 'the announcement of the purge');
  t.same(heard[0], { workspace: ACME, generation: { all: 1, list: 0 }, keys: [] }, 'and announced the generation it moved to');
});
