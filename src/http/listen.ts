/** Listening as a promise: the address once bound, or the bind's error (a port taken, say). */
import type { Server } from 'node:http';
import type { AddressInfo, ListenOptions } from 'node:net';

/** Starts `server` listening; resolves with its address, rejects with the bind error. */
export function listen(server: Server, options: ListenOptions): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
