/** A free TCP port on loopback, for the child processes the benchmarks, the soak and the tests start. */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Ports are picked from here up to just below the kernel's ephemeral range. */
const FLOOR = 10_000;
const ATTEMPTS = 50;

/** The first port the kernel hands out for outgoing connections (32768 when it cannot be read). */
function ephemeralStart(): number {
  try {
    const first = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
    return Number.isInteger(first) && first > 0 ? first : 32_768;
  } catch {
    return 32_768;
  }
}

/** Whether a listener can bind `port` (0: any) on 127.0.0.1; resolves with the port bound, or null. */
function probe(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        resolve(typeof address === 'object' && address !== null ? address.port : null),
      );
    });
  });
}

/**
 * Resolves with a port that was free a moment ago (the probe server is closed again), chosen
 * below the ephemeral range. A port from that range, once freed, can be taken as the source port
 * of any outgoing connection before the child binds it (EADDRINUSE); and a client reconnecting to
 * it after its server is gone, as a Redis client does, can end up connected to itself (TCP
 * simultaneous open), taking its own bytes for the server's.
 */
export async function freePort(): Promise<number> {
  const top = ephemeralStart() - 1;
  if (top - FLOOR >= 1000) {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const port = await probe(FLOOR + Math.floor(Math.random() * (top - FLOOR + 1)));
      if (port !== null) return port;
    }
  }
  const port = await probe(0);
  if (port === null) throw new Error('no free port on 127.0.0.1');
  return port;
}
