/** A free TCP port on loopback, for the child processes the benchmarks, the soak and the tests start. */
import { createServer } from 'node:net';

/** Resolves with a port that was free a moment ago (the probe server is closed again). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
