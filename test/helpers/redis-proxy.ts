/**
 * A TCP proxy in front of Redis whose link a test can cut (every connection dropped, new ones
 * refused at once) and restore, to cut one app off Redis while others keep it. The proxy itself
 * is ./tcp-proxy.ts; this adds the Redis URL and the teardown.
 */
import { startTcpProxy, type TcpProxyOptions } from './tcp-proxy.js';
import type { TestLike } from './redis.js';

/** A running proxy. */
export interface RedisProxy {
  readonly url: string;
  readonly cut: boolean;
  /** Drops every connection and refuses new ones until restore(). */
  cutLink(): void;
  restore(): void;
}

/** Starts a proxy to 127.0.0.1:`port`; closed in teardown. */
export async function startRedisProxy(
  t: TestLike,
  port: number,
  options: TcpProxyOptions = {},
): Promise<RedisProxy> {
  const proxy = await startTcpProxy({ host: '127.0.0.1', port }, options);
  t.teardown(() => proxy.close());
  return {
    url: `redis://127.0.0.1:${proxy.port}`,
    get cut() {
      return proxy.cut;
    },
    cutLink: () => proxy.cutLink(),
    restore: () => proxy.restore(),
  };
}
