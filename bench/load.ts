/**
 * The two load shapes: full tilt (throughput and latency percentiles under load; wrk when
 * installed, else autocannon, which also drives the mixed workload's per-request rewrites),
 * and one connection sending requests back to back (unloaded latency, timed with hrtime so
 * sub-millisecond differences show).
 */
import { Agent, request } from 'node:http';
import autocannon, { type AutocannonRequest } from 'autocannon';
import { wrk } from './wrk.js';

/** One measured run. Latencies in milliseconds. */
export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  errors: number;
  statuses: Record<string, number>;
}

/** Options of {@link hammer}. */
export interface HammerOptions {
  port: number;
  path: string;
  /**
   * Paths requested in turn, one request after another (the first is `path`), so requests in
   * flight at once ask for different resources: none shares another's lookup.
   */
  paths?: readonly string[];
  headers: Record<string, string>;
  connections: number;
  durationSec: number;
  /** The fixed-request load generator (BenchSettings.load); per-request rewrites need autocannon. */
  tool: 'wrk' | 'autocannon';
  /** A per-request rewrite (mixed workloads); the static path/headers are used otherwise. */
  setupRequest?: (request: AutocannonRequest) => AutocannonRequest;
}

/** Runs the load generator (pipelining 1) against 127.0.0.1:port. */
export async function hammer(options: HammerOptions): Promise<LoadResult> {
  if (options.tool === 'wrk') {
    if (options.setupRequest !== undefined) throw new Error('per-request rewrites need autocannon');
    return wrk(options);
  }
  const { paths } = options;
  if (paths !== undefined && options.setupRequest !== undefined)
    throw new Error('paths in turn and a per-request rewrite are two rewrites: pass one');
  let next = 0;
  const setupRequest =
    options.setupRequest ??
    (paths === undefined
      ? undefined
      : (request: AutocannonRequest): AutocannonRequest => ({
          ...request,
          path: paths[next++ % paths.length]!,
        }));
  const result = await autocannon({
    url: `http://127.0.0.1:${options.port}`,
    connections: options.connections,
    pipelining: 1,
    duration: options.durationSec,
    requests: [
      {
        method: 'GET',
        path: options.path,
        headers: options.headers,
        ...(setupRequest === undefined ? {} : { setupRequest }),
      },
    ],
  });
  const statuses: Record<string, number> = {};
  for (const [status, { count }] of Object.entries(result.statusCodeStats))
    statuses[status] = count;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    errors: result.errors + result.timeouts,
    statuses,
  };
}

/** Sequential latency samples over one keep-alive connection. */
export interface LatencyResult {
  p50: number;
  p99: number;
  samples: number;
  statuses: Record<string, number>;
}

/** One GET over `agent` (keep-alive), its body read and dropped: resolves with its status. */
export function getStatus(
  agent: Agent,
  port: number,
  path: string,
  headers: Record<string, string>,
): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Sends `count` requests one after another and returns latency percentiles (ms, µs precision). */
export async function sequentialLatency(
  port: number,
  paths: () => string,
  headers: Record<string, string>,
  count: number,
): Promise<LatencyResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  const statuses: Record<string, number> = {};
  try {
    for (let i = 0; i < count; i++) {
      const started = process.hrtime.bigint();
      const status = await getStatus(agent, port, paths(), headers);
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  } finally {
    agent.destroy();
  }
  times.sort((a, b) => a - b);
  return {
    p50: percentile(times, 0.5),
    p99: percentile(times, 0.99),
    samples: times.length,
    statuses,
  };
}

/** The q-quantile of sorted values (nearest rank). */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** The median of values (mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
