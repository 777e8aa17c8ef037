/**
 * A TCP proxy in front of Redis whose link a test can cut (every connection dropped, new ones
 * refused at once) and restore, to cut one app off Redis while others keep it.
 */
import { createConnection, createServer, type Socket } from 'node:net';
import type { TestLike } from './redis.js';

/** A running proxy. */
export interface RedisProxy {
  readonly url: string;
  readonly cut: boolean;
  /** Drops every connection and refuses new ones until restore(). */
  cutLink(): void;
  restore(): void;
}

/** Options of {@link startRedisProxy}. */
export interface RedisProxyOptions {
  /** Whether a chunk the client sent goes on to Redis (default: every chunk does). */
  readonly forward?: (chunk: Buffer) => boolean;
}

/** Starts a proxy to 127.0.0.1:`port`; closed in teardown. */
export async function startRedisProxy(
  t: TestLike,
  port: number,
  options: RedisProxyOptions = {},
): Promise<RedisProxy> {
  const { forward } = options;
  const sockets = new Set<Socket>();
  let cut = false;
  const server = createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    const upstream = createConnection({ host: '127.0.0.1', port });
    sockets.add(client).add(upstream);
    if (forward === undefined) client.pipe(upstream);
    else
      client.on('data', (chunk: Buffer) => {
        if (forward(chunk)) upstream.write(chunk);
      });
    upstream.pipe(client);
    for (const socket of [client, upstream]) {
      socket.on('error', () => {});
      socket.on('close', () => {
        sockets.delete(socket);
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
  return {
    url: `redis://127.0.0.1:${address.port}`,
    get cut() {
      return cut;
    },
    cutLink() {
      cut = true;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      cut = false;
    },
  };
}
