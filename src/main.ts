/** The process: load config, build the app, listen, and handle signals (DESIGN A1). */
import { PrimaryQuotaStore } from './cluster/primary-quota-store.js';
import cluster from 'node:cluster';
import { listen } from './http/listen.js';
import { buildApp } from './app.js';
import { runPrimary } from './cluster/primary.js';
import { joinCluster, listenWorkerAdmin, WORKER_SLOT_ENV } from './cluster/worker.js';
import { loadConfig } from './config/load.js';
import { ConfigError } from './errors.js';
import { createLogger, flushLogger } from './observability/logger.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const root = createLogger({ level: config.log.level });
  // server.workers > 1: this process is the primary (no gateway of its own) or one of its workers.
  if (config.server.workers > 1 && cluster.isPrimary) return runPrimary(config, root);
  const logger = cluster.isWorker
    ? root.child({ worker: Number(process.env[WORKER_SLOT_ENV]), pid: process.pid })
    : root;
  // stdout is buffered (16 KB) so request lines cost no syscall; a quiet gateway must still show
  // its lines within a second, and lifecycle lines (listening, reloads) at once.
  setInterval(() => void flushLogger(logger), 1000).unref();
  // A worker without Redis counts quotas in its primary, so they hold across the workers.
  const app = buildApp(config, {
    logger,
    ...(cluster.isWorker
      ? { quotaStore: new PrimaryQuotaStore(), worker: Number(process.env[WORKER_SLOT_ENV]) }
      : {}),
  });
  const [publicAddress, adminAddress] = await Promise.all([
    listen(app.server, { port: config.server.port, host: config.server.host }),
    cluster.isWorker
      ? listenWorkerAdmin(app.admin)
      : listen(app.admin, { port: config.admin.port, host: config.admin.host }),
  ]);
  app.markReady();
  logger.info(
    { public: publicAddress, admin: adminAddress, redis: app.redis !== null },
    cluster.isWorker ? 'worker listening' : 'listening',
  );
  void flushLogger(logger);

  let stopping = false;
  const stop = (signal: string): void => {
    // A second signal cuts what is left of the drain delay short; in-flight requests still finish.
    if (stopping) return void app.close();
    stopping = true;
    logger.info(
      { signal, drainDelayMs: signal === 'SIGTERM' ? app.settings().config.server.drainDelay : 0 },
      'shutting down',
    );
    void flushLogger(logger);
    // SIGTERM is the orchestrator's: drain first (DESIGN A8). SIGINT is a person at a terminal.
    void (signal === 'SIGTERM' ? app.drain() : app.close())
      .then(() => flushLogger(logger))
      .then(() => process.exit(0));
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  if (cluster.isWorker)
    joinCluster(app.metrics, { public: publicAddress, admin: adminAddress }, stop);
  // SIGHUP: re-read the config files; a bad file is logged and the running config kept.
  process.on('SIGHUP', () => {
    try {
      app.reload(loadConfig(process.env));
      app.metrics.configReloads.inc({ result: 'ok' });
      logger.info('configuration reloaded');
    } catch (error) {
      app.metrics.configReloads.inc({ result: 'error' });
      logger.error(
        { problems: error instanceof ConfigError ? error.problems : [String(error)] },
        'configuration reload failed; keeping the running configuration',
      );
    }
    void flushLogger(logger);
  });
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
