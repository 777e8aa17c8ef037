/**
 * Bench child: one gateway built with buildApp, listening on loopback, with the production
 * logger (createLogger: buffered asynchronous stdout) at the configured level; the parent points
 * this process's stdout at /dev/null. Reports its cache counters and CPU time over IPC.
 */
import type { AddressInfo } from 'node:net';
import { buildApp, type App } from '../src/app.js';
import { configWith } from '../src/config/load.js';
import { createLogger } from '../src/observability/logger.js';
import { cpuMicros, serveCommands } from './pinned-child.js';

/** Counters the bench reads before and after a run; deltas give hit ratios and upstream calls. */
export interface GatewayStats {
  /** `tier/result` → count, summed over resources (e.g. `l1/hit`, `l2/miss`). */
  lookups: Record<string, number>;
  /** Upstream requests by outcome. */
  upstream: Record<string, number>;
  /** transcoded_url re-signs by result. */
  resigns: Record<string, number>;
  /** HTTP requests by status. */
  statuses: Record<string, number>;
  /** Requests answered by another request's lookup (coalesced), by resource. */
  coalesced: Record<string, number>;
  l1Entries: number;
  /** User + system CPU time of the process so far, µs. */
  cpuMicros: number;
  l1Bytes: number;
  rss: number;
}

let app: App | undefined;

function sumBy(
  values: ReadonlyArray<{ value: number; labels: Record<string, string | number> }>,
  label: (labels: Record<string, string | number>) => string,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const { value, labels } of values) {
    const key = label(labels);
    out[key] = (out[key] ?? 0) + value;
  }
  return out;
}

serveCommands(
  {
    /** Builds and starts the gateway with these config overrides; resolves with its port. */
    async start(overrides: Record<string, unknown>): Promise<{ port: number }> {
      const config = configWith(overrides);
      const logger = createLogger({ level: config.log.level });
      app = buildApp(config, { logger });
      const server = app.server;
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      app.markReady();
      return { port: (server.address() as AddressInfo).port };
    },
    async stats(): Promise<GatewayStats> {
      if (app === undefined) throw new Error('not started');
      const metrics = app.metrics;
      const [lookups, upstream, resigns, requests, coalesced] = await Promise.all([
        metrics.cacheLookups.get(),
        metrics.upstreamRequests.get(),
        metrics.resigns.get(),
        metrics.httpRequests.get(),
        metrics.coalesced.get(),
      ]);
      return {
        lookups: sumBy(lookups.values, (l) => `${l['tier']}/${l['result']}`),
        upstream: sumBy(upstream.values, (l) => String(l['outcome'])),
        resigns: sumBy(resigns.values, (l) => String(l['result'])),
        statuses: sumBy(requests.values, (l) => String(l['status'])),
        coalesced: sumBy(coalesced.values, (l) => String(l['resource'])),
        l1Entries: app.l1.size,
        cpuMicros: cpuMicros(),
        l1Bytes: app.l1.bytes,
        rss: process.memoryUsage.rss(),
      };
    },
  },
  async () => {
    await app?.close();
  },
);
