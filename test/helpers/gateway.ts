/**
 * Starts a real gateway (both listeners on free loopback ports) against a real simulator, with
 * logs captured, and tears both down after the test. Requests go over real sockets with undici.
 */
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { buildApp, type App } from '../../src/app.js';
import type { Clock } from '../../src/clock.js';
import { configWith, mergeConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/observability/logger.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/sim/server.js';
import { captureLogs } from './capture-logs.js';
import { openApiContract, type OpenApiContract } from './openapi-contract.js';

type Tap = { teardown(fn: () => unknown): void };

/** Options of startGateway. */
export interface GatewayOptions {
  config?: Record<string, unknown>;
  sim?: Simulator;
  simOptions?: SimulatorOptions;
  clock?: Clock;
  redis?: null;
  redisUrl?: string;
  /** Refresh-ahead's draw (AppDeps.random). */
  random?: () => number;
}

/** One response, body read as text. */
export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): any;
}

/** A running gateway under test. */
export interface TestGateway {
  app: App;
  sim: Simulator;
  port: number;
  adminPort: number;
  logs: ReturnType<typeof captureLogs>;
  /** GET (or another method) a path on a workspace host with optional key and headers. */
  get(
    path: string,
    options?: {
      workspace?: string;
      key?: string | null;
      headers?: Record<string, string>;
      method?: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'OPTIONS' | 'PATCH';
    },
  ): Promise<Reply>;
  /** A request to the admin listener. */
  admin(
    path: string,
    options?: { method?: 'GET' | 'POST'; body?: string; headers?: Record<string, string> },
  ): Promise<Reply>;
  /** A valid key of a workspace. */
  key(workspace?: string): string;
}

/**
 * Reads a response and validates it against the OpenAPI description (openapi-contract.ts): a
 * reply the document does not describe fails the test that received it.
 */
async function reply(
  contract: OpenApiContract,
  res: Awaited<ReturnType<typeof request>>,
  listener: 'public' | 'admin',
  method: string,
  path: string,
): Promise<Reply> {
  const text = await res.body.text();
  contract.check({ listener, method, path, status: res.statusCode, headers: res.headers, text });
  return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) };
}

/** Starts a gateway (and a simulator unless one is given). */
export async function startGateway(t: Tap, options: GatewayOptions = {}): Promise<TestGateway> {
  // Built before the first request, so validating replies puts no pause between a test's requests.
  const contract = openApiContract();
  const sim = options.sim ?? (await startSimulator(options.simOptions));
  if (options.sim === undefined) t.teardown(() => sim.close());
  const logs = captureLogs();
  const config = configWith(
    mergeConfig(
      {
        server: { port: 0, host: '127.0.0.1' },
        admin: { port: 0, token: 'test-admin-token' },
        upstream: {
          baseUrl: sim.baseUrlTemplate,
          timeouts: { connect: '1s', headers: '1s', body: '1s', deadline: '2s' },
          retryBackoff: { base: '10ms', max: '50ms' },
        },
        // No audits unless a test asks: they are upstream requests the counting tests do not expect.
        cache: { redis: { url: options.redisUrl ?? null }, audit: { sampleRatio: 0 } },
        // The simulator's URLs live 90 s: leave them most of it, so entries stay fresh for their TTL.
        signing: { minRemaining: '10s' },
        log: { level: 'info' },
      },
      options.config ?? {},
    ),
  );
  const logger = createLogger({ level: config.log.level, destination: logs.stream });
  const app = buildApp(config, {
    logger,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.redis === undefined ? {} : { redis: options.redis }),
    ...(options.random === undefined ? {} : { random: options.random }),
  });
  await new Promise<void>((resolve) => app.server.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => app.admin.listen(0, '127.0.0.1', resolve));
  app.markReady();
  t.teardown(() => app.close());
  const port = (app.server.address() as AddressInfo).port;
  const adminPort = (app.admin.address() as AddressInfo).port;
  return {
    app,
    sim,
    port,
    adminPort,
    logs,
    key: (workspace = 'acme') => sim.keys[workspace]![0]!,
    async get(path, { workspace = 'acme', key, headers = {}, method = 'GET' } = {}) {
      const apiKey = key === undefined ? sim.keys[workspace]?.[0] : key;
      const res = await request(`http://127.0.0.1:${port}${path}`, {
        method,
        headers: {
          host: `${workspace}.localhost:${port}`,
          ...(apiKey === null || apiKey === undefined ? {} : { 'x-api-key': apiKey }),
          ...headers,
        },
      });
      return reply(contract, res, 'public', method, path);
    },
    async admin(path, { method = 'GET', body, headers = {} } = {}) {
      const res = await request(`http://127.0.0.1:${adminPort}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
      });
      return reply(contract, res, 'admin', method, path);
    },
  };
}
