/**
 * Gateways for one run of a property test: cold caches on a simulator the test keeps, on Redis
 * (once every app's tier is up) or without it. The run closes them itself, so the next run starts
 * cold; the test's own teardown would come only after every run.
 */
import type { Clock } from '../../src/clock.js';
import type { Simulator } from '../../src/sim/server.js';
import { startGateway, type TestGateway } from './gateway.js';
import { waitFor, type TestRedis } from './redis.js';

/** Options of openFleetForRun. */
export interface FleetForRunOptions {
  sim: Simulator;
  instances: number;
  /** Without it the apps run with no Redis at all. */
  redis: TestRedis | undefined;
  /** Every app's config; give each run its own Redis key prefix. */
  config: Record<string, unknown>;
  clock?: Clock;
}

/** The apps of one run, and how to close them. */
export interface FleetForRun {
  gateways: TestGateway[];
  close(): Promise<void>;
}

/** Starts the apps; if one fails to start, those already started are closed before the error. */
export async function openFleetForRun(options: FleetForRunOptions): Promise<FleetForRun> {
  const { sim, redis, config, clock } = options;
  const teardowns: Array<() => unknown> = [];
  const tap = { teardown: (fn: () => unknown) => void teardowns.push(fn) };
  const close = async (): Promise<void> => {
    for (const fn of teardowns.reverse()) await fn();
  };
  const gateways: TestGateway[] = [];
  try {
    for (let i = 0; i < options.instances; i++) {
      gateways.push(
        await startGateway(tap, {
          sim,
          config,
          ...(clock === undefined ? {} : { clock }),
          ...(redis === undefined ? { redis: null } : { redisUrl: redis.url }),
        }),
      );
    }
    if (redis !== undefined)
      await waitFor(
        () => gateways.every((gw) => gw.app.redis?.up === true),
        10_000,
        'Redis tier up',
      );
  } catch (error) {
    await close();
    throw error;
  }
  return { gateways, close };
}
