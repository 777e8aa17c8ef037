/**
 * The cluster primary (server.workers > 1): forks the workers, replaces one that dies (with
 * back-off, counted in recgw_worker_restarts_total), serves the admin listener for all of them,
 * passes SIGHUP on, and on SIGTERM/SIGINT has every worker drain and exits 0 once all have.
 * It builds no gateway itself: a crash in request handling can take down a worker, not this.
 */
import { PrimaryQuotas } from './primary-quotas.js';
import cluster, { type Worker } from 'node:cluster';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listen } from '../http/listen.js';
import type { Logger } from 'pino';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { Config } from '../config/schema.js';
import { flushLogger } from '../observability/logger.js';
import { WorkerMetrics } from './aggregate-metrics.js';
import { isMessage, type WorkerReady } from './messages.js';
import { primaryAdminHandler, type ReadyWorker } from './primary-admin.js';
import { redisConfigured } from '../redis/connection.js';
import { restartDelay, STABLE_AFTER_MS } from './restart-backoff.js';
import { WORKER_SLOT_ENV } from './worker.js';

/** One worker position: its current process, and how its recent processes fared. */
interface Slot {
  readonly index: number;
  worker: Worker | undefined;
  startedAt: number;
  adminPort: number | undefined;
  quickDeaths: number;
  restartTimer: NodeJS.Timeout | undefined;
}

/** The primary's own series, summed with the workers' on /metrics. */
function primaryMetrics(readyCount: () => number): { registry: Registry; restarts: Counter } {
  const registry = new Registry();
  // The primary's process metrics are summed with the workers': the pod's CPU and memory in all.
  collectDefaultMetrics({ register: registry });
  const restarts = new Counter({
    name: 'recgw_worker_restarts_total',
    help: 'Workers replaced after they died (server.workers > 1).',
    registers: [registry],
  });
  new Gauge({
    name: 'recgw_workers_ready',
    help: 'Workers up and serving (server.workers > 1).',
    registers: [registry],
    collect() {
      this.set(readyCount());
    },
  });
  return { registry, restarts };
}

/** Runs the primary until every worker has stopped after SIGTERM/SIGINT (exit 0) or a worker failed to start (exit 1). */
export async function runPrimary(config: Config, logger: Logger): Promise<void> {
  const count = config.server.workers;
  const metrics = primaryMetrics(() => ready().length);
  const requests = new WorkerMetrics();
  // Without Redis the workers count quotas here, so a key's quota holds across them.
  const quotas = new PrimaryQuotas(config.limits.perKey.maxLocalKeys);
  const slots: Slot[] = Array.from({ length: count }, (_, index) => ({
    index,
    worker: undefined,
    startedAt: 0,
    adminPort: undefined,
    quickDeaths: 0,
    restartTimer: undefined,
  }));
  let stopping = false;
  let announced = false;
  let exitCode = 0;
  let publicAddress: AddressInfo | undefined;

  const ready = (): ReadyWorker[] =>
    slots.flatMap((slot) =>
      slot.worker !== undefined && slot.adminPort !== undefined && !slot.worker.isDead()
        ? [{ slot: slot.index + 1, worker: slot.worker, adminPort: slot.adminPort }]
        : [],
    );

  const admin = createServer(
    primaryAdminHandler({
      logger: logger.child({ component: 'admin' }),
      registry: metrics.registry,
      requests,
      ready,
      stopping: () => stopping,
      redisConfigured: redisConfigured(config.cache.redis),
    }),
  );
  const adminAddress = await listen(admin, { port: config.admin.port, host: config.admin.host });

  let allStopped: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (allStopped = resolve));

  const fork = (slot: Slot): void => {
    slot.restartTimer = undefined;
    slot.adminPort = undefined;
    slot.startedAt = Date.now();
    const worker = cluster.fork({ [WORKER_SLOT_ENV]: String(slot.index + 1) });
    slot.worker = worker;
    logger.info({ worker: slot.index + 1, pid: worker.process.pid }, 'worker started');
    worker.on('message', (message: unknown) => {
      if (
        requests.onMessage(message) ||
        quotas.onMessage(worker, message) ||
        !isMessage<WorkerReady>(message, 'recgw:ready')
      )
        return;
      slot.adminPort = message.admin.port;
      publicAddress ??= message.public;
      if (!announced && ready().length === count) {
        announced = true;
        // The line tests and operators wait for, as a single process logs it once it serves.
        logger.info({ public: publicAddress, admin: adminAddress, workers: count }, 'listening');
        void flushLogger(logger);
      }
    });
    worker.on('exit', (code, signal) => {
      slot.adminPort = undefined;
      requests.retire(worker);
      if (stopping) {
        if (slots.every((s) => s.worker === undefined || s.worker.isDead())) allStopped();
        return;
      }
      // Dying before every worker first served is a start-up failure (a port in use, a bad key
      // file): exit 1 as a single process would, so the orchestrator sees it, not a pod never ready.
      if (!announced) {
        exitCode = 1;
        logger.fatal(
          { worker: slot.index + 1, pid: worker.process.pid, code, signal },
          'a worker failed to start; stopping',
        );
        stop('start-up failure');
        return;
      }
      // A worker dying soon after its start would die again at once: each quick death doubles the wait.
      slot.quickDeaths = Date.now() - slot.startedAt < STABLE_AFTER_MS ? slot.quickDeaths + 1 : 1;
      const delay = restartDelay(slot.quickDeaths);
      metrics.restarts.inc();
      logger.error(
        { worker: slot.index + 1, pid: worker.process.pid, code, signal, restartInMs: delay },
        'worker exited; restarting it',
      );
      void flushLogger(logger);
      slot.restartTimer = setTimeout(() => fork(slot), delay);
    });
  };
  for (const slot of slots) fork(slot);

  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down; draining every worker');
    void flushLogger(logger);
    for (const slot of slots) {
      clearTimeout(slot.restartTimer);
      // Each worker drains as a single process does on SIGTERM, within its own bounds.
      if (slot.worker !== undefined && !slot.worker.isDead()) slot.worker.process.kill('SIGTERM');
    }
    if (slots.every((s) => s.worker === undefined || s.worker.isDead())) allStopped();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // Each worker re-reads the files and logs its own outcome, as a single process does.
  process.on('SIGHUP', () => {
    for (const { worker } of ready()) worker.process.kill('SIGHUP');
    logger.info({ workers: ready().length }, 'SIGHUP passed to every worker');
    void flushLogger(logger);
  });

  await stopped;
  // The admin listener outlives the drain, so /readyz keeps answering 503 until the end.
  await new Promise<void>((resolve) => {
    admin.close(() => resolve());
    admin.closeAllConnections();
  });
  logger.info('every worker stopped');
  await flushLogger(logger);
  process.exit(exitCode);
}
