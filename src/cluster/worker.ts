/**
 * The worker side of `server.workers` > 1: each worker runs the whole gateway (public listener on
 * the port shared through the primary, its own L1), keeps its admin listener on a loopback port of
 * its own for the primary to forward admin requests to, and answers the primary's metrics requests.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listen } from '../http/listen.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import { isMessage, type MetricsReply, type MetricsRequest, type WorkerReady } from './messages.js';

/** The environment variable telling a forked worker its slot (1…workers), for its log lines. */
export const WORKER_SLOT_ENV = 'RECGW_WORKER_SLOT';

/**
 * Listens on 127.0.0.1 on a port of the kernel's choosing. `exclusive` keeps the port this
 * worker's own: without it node:cluster would share one handle among all workers, and a purge
 * forwarded there would reach whichever worker the primary's round robin picked.
 */
export function listenWorkerAdmin(server: Server): Promise<AddressInfo> {
  return listen(server, { port: 0, host: '127.0.0.1', exclusive: true });
}

/** Reports this worker ready to the primary, serves its metrics requests, and stops when the primary is gone. */
export function joinCluster(
  metrics: GatewayMetrics,
  addresses: { public: AddressInfo; admin: AddressInfo },
  stop: (reason: string) => void,
): void {
  process.on('message', (message: unknown) => {
    if (!isMessage<MetricsRequest>(message, 'recgw:metrics')) return;
    metrics.json().then(
      (json) => reply({ type: 'recgw:metrics', id: message.id, metrics: json }),
      (error: unknown) => reply({ type: 'recgw:metrics', id: message.id, error: String(error) }),
    );
  });
  // The primary holds the shared listening socket and restarts workers: without it this worker
  // would keep serving no one, an orphan holding memory. It goes the way a SIGTERM would.
  process.on('disconnect', () => stop('primary gone'));
  const ready: WorkerReady = {
    type: 'recgw:ready',
    public: addresses.public,
    admin: addresses.admin,
  };
  process.send?.(ready);
}

function reply(message: MetricsReply): void {
  // The channel may be closing with the primary; a lost reply only times out that one scrape.
  if (process.connected) process.send?.(message);
}
