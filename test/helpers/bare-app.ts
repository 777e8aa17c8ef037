/**
 * Starts an app on a config the test builds itself (an origin of its own instead of the
 * simulator): public listener only on a free loopback port, no Redis, logs captured; closed after
 * the test.
 */
import type { AddressInfo } from 'node:net';
import { buildApp, type App } from '../../src/app.js';
import type { Config } from '../../src/config/schema.js';
import { createLogger } from '../../src/observability/logger.js';
import { captureLogs, type CapturedLogs } from './capture-logs.js';

type Tap = { teardown(fn: () => unknown): void };

/** A running app, the port its public listener took, and what it logged. */
export interface BareApp {
  app: App;
  port: number;
  logs: CapturedLogs;
}

/** Builds, listens and marks ready; `level` is the logger's (most tests want only errors). */
export async function startBareApp(t: Tap, config: Config, level = 'error'): Promise<BareApp> {
  const logs = captureLogs();
  const app = buildApp(config, {
    logger: createLogger({ level, destination: logs.stream }),
    redis: null,
  });
  await new Promise<void>((resolve) => app.server.listen(0, '127.0.0.1', resolve));
  app.markReady();
  t.teardown(() => app.close());
  return { app, port: (app.server.address() as AddressInfo).port, logs };
}
