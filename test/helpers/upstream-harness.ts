/** Builds an upstream client against a test origin, with its own metrics, captured logs and a movable clock. */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { configWith } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { GatewayMetrics } from '../../src/observability/metrics.js';
import { createUpstream } from '../../src/upstream/client.js';
import type { Upstream } from '../../src/upstream/types.js';

/** What a test drives and inspects. */
export interface Harness {
  upstream: Upstream;
  metrics: GatewayMetrics;
  clock: { ms: number; now(): number };
  /** Everything logged so far. */
  logText(): string;
  /** `upstream_requests_total` as { "<resource>:<outcome>": count }. */
  outcomes(): Promise<Record<string, number>>;
  /** `circuit_state` as { "<target>": value }. */
  circuit(): Promise<Record<string, number>>;
}

/** Fast defaults for tests; `upstream` entries override config/default.yaml's. */
export function harness(
  t: { teardown(fn: () => unknown): void },
  baseUrl: string,
  upstream: Record<string, unknown> = {},
  patch: Partial<Config['upstream']> = {},
  serviceKey?: string,
): Harness {
  const config = configWith({
    upstream: {
      baseUrl,
      retryBackoff: { base: '5ms', max: '20ms' },
      timeouts: { deadline: '2s' },
      ...upstream,
    },
  }).upstream;
  const metrics = new GatewayMetrics({ defaultMetrics: false });
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'));
      callback();
    },
  });
  const logger = pino({ level: 'debug' }, stream);
  const clock = {
    ms: Date.now(),
    now(): number {
      return this.ms;
    },
  };
  const deps =
    serviceKey === undefined ? { metrics, logger, clock } : { metrics, logger, clock, serviceKey };
  const client = createUpstream({ ...config, ...patch }, deps);
  t.teardown(() => client.close());
  return {
    upstream: client,
    metrics,
    clock,
    logText: () => chunks.join(''),
    async outcomes() {
      const out: Record<string, number> = {};
      for (const { labels, value } of (await metrics.upstreamRequests.get()).values)
        out[`${labels.resource}:${labels.outcome}`] = value;
      return out;
    },
    async circuit() {
      const out: Record<string, number> = {};
      for (const { labels, value } of (await metrics.circuitState.get()).values)
        out[String(labels.target)] = value;
      return out;
    },
  };
}

/** Runs `fn` and returns what it threw (fails the caller's expectations if it did not throw). */
export async function thrown(
  fn: () => Promise<unknown>,
): Promise<Error & { code?: string; status?: number; retryAfter?: number }> {
  try {
    await fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}
