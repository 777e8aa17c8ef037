/**
 * A loopback TCP proxy whose link can be cut (every connection dropped, new ones refused at once)
 * and restored, with an optional filter on what clients send: how the tests take
 * Redis away from one app while others keep it.
 */
import { createConnection, createServer, type Socket } from 'node:net';

/** Options of {@link startTcpProxy}. */
export interface TcpProxyOptions {
  /** Whether a chunk a client sent goes on to the target (default: every chunk does). */
  readonly forward?: (chunk: Buffer) => boolean;
}

/** A running proxy on 127.0.0.1. */
export interface TcpProxy {
  readonly port: number;
  /** True between cutLink() and restore(). */
  readonly cut: boolean;
  /** Drops every connection and refuses new ones until restore(). */
  cutLink(): void;
  restore(): void;
  /**
   * Keeps what the target sends in the proxy until release(): the client receives nothing
   * meanwhile, and a connection that closes first loses it (unlike a stopped process, whose
   * kernel would still have received it). With `only: 'replication'`, only on connections whose
   * client asked the target for its replication stream (a replica's SYNC or PSYNC): every other
   * client keeps being answered.
   */
  hold(only?: 'replication'): void;
  release(): void;
  /** Drops every connection and stops listening. */
  close(): Promise<void>;
}

/** Starts a proxy to `target`. */
export async function startTcpProxy(
  target: { readonly host: string; readonly port: number },
  options: TcpProxyOptions = {},
): Promise<TcpProxy> {
  const { forward } = options;
  const sockets = new Set<Socket>();
  let cut = false;
  let held: Array<() => void> | undefined;
  let replicationOnly = false;
  const server = createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    const upstream = createConnection(target);
    sockets.add(client).add(upstream);
    let replication = false;
    client.on('data', (chunk: Buffer) => {
      replication ||= /\r\nP?SYNC\r\n/i.test(chunk.toString('latin1'));
    });
    if (forward === undefined) client.pipe(upstream);
    else
      client.on('data', (chunk: Buffer) => {
        if (forward(chunk)) upstream.write(chunk);
      });
    upstream.on('data', (chunk: Buffer) => {
      if (held === undefined || (replicationOnly && !replication)) client.write(chunk);
      else held.push(() => client.write(chunk));
    });
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
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');
  const dropAll = (): void => {
    for (const socket of sockets) socket.destroy();
  };
  return {
    port: address.port,
    get cut() {
      return cut;
    },
    cutLink() {
      cut = true;
      dropAll();
    },
    restore() {
      cut = false;
    },
    hold(only) {
      replicationOnly = only === 'replication';
      held ??= [];
    },
    release() {
      const writes = held ?? [];
      held = undefined;
      for (const write of writes) write();
    },
    close() {
      dropAll();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
