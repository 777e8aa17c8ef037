/** What every case is given: the settings, the simulator (in the bench's own process), Redis on demand. */
import type { Simulator } from '../src/sim/server.js';
import type { Settings } from './compare.js';
import {
  startGateway,
  startRedis,
  type Child,
  type Gateway,
  type GatewayOptions,
} from './processes.js';

/** The shared pieces of a bench run. */
export interface Bench {
  readonly settings: Settings;
  /** Two workspaces of 2,000 recordings, URLs valid for an hour (no re-signing during a run). */
  readonly sim: Simulator;
  /** With BENCH_REQUEST_LOG=1 the gateway logs every request (info) and Fastify too (`logger: true`). */
  readonly requestLog: boolean;
  /** A private redis-server's URL (started on first use), and a key prefix no other case uses. */
  redis(): Promise<{ url: string; keyPrefix: string }>;
  /** Everything started by a case; stopped when the case ends. */
  readonly started: Child[];
}

/** A positive number from the environment, `fallback` when unset; anything else is an error. */
export function setting(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  parse: (raw: string) => number | undefined = Number,
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = parse(raw);
  if (value === undefined || !Number.isFinite(value) || value <= 0)
    throw new TypeError(`${name} must be positive, got ${raw}`);
  return value;
}

/** Request headers of a workspace's client: its Host, a valid key, JSON. */
export function clientHeaders(sim: Simulator, workspace = 'acme'): Record<string, string> {
  return {
    host: `${workspace}.localhost`,
    'x-api-key': sim.keys[workspace]![0]!,
    accept: 'application/json',
  };
}

/** The two hit paths: a 30-recording list page and one recording. */
export function hitPaths(sim: Simulator): { list: string; recording: string } {
  return {
    list: '/api/external/v2/recordings?page_number=1&page_size=30',
    recording: `/api/external/v2/recordings/${sim.data['acme']![0]!.id}`,
  };
}

/** Paths of the first `n` recordings of acme. */
export function recordingPaths(sim: Simulator, n: number): string[] {
  return sim.data['acme']!.slice(0, n).map((r) => `/api/external/v2/recordings/${r.id}`);
}

/**
 * Starts a gateway on the simulator with `config` (YAML lines, added to the upstream and the log
 * level), kept in `started` so the case's end stops it.
 */
export async function gateway(
  b: Bench,
  config = '',
  options: Pick<GatewayOptions, 'env' | 'workers' | 'cpus' | 'gcOnSignal'> = {},
): Promise<Gateway> {
  const level = b.requestLog ? 'info' : 'warn';
  const g = await startGateway({
    config: `upstream: { baseUrl: '${b.sim.baseUrlTemplate}' }\nlog: { level: ${level} }\n${config}`,
    ...options,
  });
  b.started.push(g);
  return g;
}

/** A lazily started Redis for a run, and its stopper. */
export function lazyRedis(): { redis: Bench['redis']; stop: () => Promise<void> } {
  let started: ReturnType<typeof startRedis> | undefined;
  let prefixes = 0;
  return {
    redis: async () => ({
      url: (await (started ??= startRedis())).url,
      keyPrefix: `bench${++prefixes}:`,
    }),
    stop: async () => {
      await (await started)?.stop();
    },
  };
}
