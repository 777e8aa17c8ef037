/**
 * Load (autocannon) and the comparison every throughput case makes: the servers are loaded in
 * turn, round after round, the order reversed every other round, so drift of the host over the
 * case (steal time, other work) lands on every server and no server always goes first. Ratios
 * are paired per round (a server's run over the reference's run of the same round); a control,
 * a second process identical to the reference, shows how far two identical servers land apart
 * on this host in the same run: a ratio inside the control's spread is no difference.
 */
import autocannon, { type AutocannonRequest } from 'autocannon';
import { cpuOf, type Server } from './processes.js';

/** Run settings, from the environment (run.ts). */
export interface Settings {
  /** Seconds per measured run (BENCH_DURATION). */
  readonly seconds: number;
  /** Measured runs per server (BENCH_ROUNDS). */
  readonly rounds: number;
  /** Seconds of warm-up per server (BENCH_WARMUP). */
  readonly warmup: number;
  /** Concurrent connections (BENCH_CONNECTIONS). */
  readonly connections: number;
}

/** What a load run asks: paths requested in turn (one request after another), or a rewrite per request. */
export interface Load {
  readonly paths: readonly string[];
  readonly headers: Record<string, string>;
  readonly rewrite?: (request: AutocannonRequest) => AutocannonRequest;
}

/** One load run. Latencies in ms. */
export interface Run {
  rps: number;
  p99: number;
  requests: number;
  statuses: Record<string, number>;
  errors: number;
}

/** Loads 127.0.0.1:port for `seconds` with `connections` (pipelining 1). */
export async function hammer(
  port: number,
  load: Load,
  seconds: number,
  connections: number,
): Promise<Run> {
  let next = 0;
  const inTurn = (request: AutocannonRequest): AutocannonRequest => ({
    ...request,
    path: load.paths[next++ % load.paths.length]!,
  });
  const rewrite = load.rewrite ?? (load.paths.length > 1 ? inTurn : undefined);
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    pipelining: 1,
    duration: seconds,
    requests: [
      {
        method: 'GET',
        path: load.paths[0]!,
        headers: load.headers,
        ...(rewrite === undefined ? {} : { setupRequest: rewrite }),
      },
    ],
  });
  const statuses: Record<string, number> = {};
  for (const [status, { count }] of Object.entries(result.statusCodeStats))
    statuses[status] = count;
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    requests: result.requests.total,
    statuses,
    errors: result.errors + result.timeouts,
  };
}

/** A server in a comparison. */
export interface Entrant {
  readonly label: string;
  readonly server: Server;
  /** Its CPU time so far, µs (default the process's own, from /proc). */
  readonly cpu?: () => Promise<number>;
}

/** One server's measured runs, in round order. */
export interface Measured {
  readonly label: string;
  readonly runs: Run[];
  /** CPU time per request of each run, µs. */
  readonly cpuPerRequest: number[];
}

/**
 * Warms each server up, then loads each in turn for `settings.rounds` rounds, the order reversed
 * every other round. Throws when any answer was not a 200 or a socket failed: a ratio of failures
 * measures nothing.
 */
export async function alternate(
  settings: Settings,
  entrants: readonly Entrant[],
  load: Load,
): Promise<Measured[]> {
  const cpu = (e: Entrant): Promise<number> => e.cpu?.() ?? Promise.resolve(cpuOf(e.server.pid));
  for (const e of entrants)
    await hammer(e.server.port, load, settings.warmup, settings.connections);
  const measured = entrants.map((e) => ({
    label: e.label,
    runs: [] as Run[],
    cpuPerRequest: [] as number[],
  }));
  for (let round = 0; round < settings.rounds; round++) {
    const order = entrants.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const i of order) {
      const before = await cpu(entrants[i]!);
      const run = await hammer(
        entrants[i]!.server.port,
        load,
        settings.seconds,
        settings.connections,
      );
      const after = await cpu(entrants[i]!);
      const bad = run.requests - (run.statuses['200'] ?? 0);
      if (bad > 0 || run.errors > 0)
        throw new Error(
          `${entrants[i]!.label}: ${bad} answers not 200, ${run.errors} errors (${JSON.stringify(run.statuses)})`,
        );
      measured[i]!.runs.push(run);
      measured[i]!.cpuPerRequest.push((after - before) / run.requests);
    }
  }
  return measured;
}

/** The median of some values (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The q-quantile (0..1) of unsorted values, nearest rank. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** Per-round ratios of a to b: their median and range. */
export interface Ratio {
  readonly median: number;
  readonly low: number;
  readonly high: number;
}

/** a's req/s over b's, round by round (run i of each was measured in round i). */
export function ratioOf(a: Measured, b: Measured): Ratio {
  const ratios = a.runs.map((run, i) => run.rps / b.runs[i]!.rps);
  return { median: median(ratios), low: Math.min(...ratios), high: Math.max(...ratios) };
}

/** The control's spread: the widest distance of its per-round ratio from 1 (0.04 is ±4%). */
export function spreadOf(control: Ratio): number {
  return Math.max(Math.abs(control.high - 1), Math.abs(1 - control.low));
}
