/** The process: load config, build the app, listen, and handle signals (DESIGN A1). */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp } from './app.js';
import { loadConfig } from './config/load.js';
import { ConfigError } from './errors.js';
import { createLogger, flushLogger } from './observability/logger.js';

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

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
  const logger = createLogger({ level: config.log.level });
  // stdout is buffered (16 KB) so request lines cost no syscall; a quiet gateway must still show
  // its lines within a second, and lifecycle lines (listening, reloads) at once.
  setInterval(() => void flushLogger(logger), 1000).unref();
  const app = buildApp(config, { logger });
  const [publicAddress, adminAddress] = await Promise.all([
    listen(app.server, config.server.port, config.server.host),
    listen(app.admin, config.admin.port, config.admin.host),
  ]);
  app.markReady();
  logger.info({ public: publicAddress, admin: adminAddress, redis: app.l2 !== null }, 'listening');
  void flushLogger(logger);

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    void app
      .close()
      .then(() => flushLogger(logger))
      .then(() => process.exit(0));
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // SIGHUP: re-read the config files; a bad file is logged and the running config kept.
  process.on('SIGHUP', () => {
    try {
      app.reload(loadConfig(process.env));
      app.metrics.configReloads.inc({ result: 'ok' });
      logger.info('configuration reloaded');
    } catch (error) {
      app.metrics.configReloads.inc({ result: 'error' });
      logger.error({ problems: error instanceof ConfigError ? error.problems : [String(error)] }, 'configuration reload failed; keeping the running configuration');
    }
    void flushLogger(logger);
  });
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
