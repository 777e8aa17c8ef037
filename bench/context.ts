/**
 * Shared pieces of the bench cases: settings from the environment, the result shapes, recording
 * a gateway answer for the ceiling, and the alternating ceiling/gateway comparison.
 */
import { request } from 'node:http';
import type { RecordedAnswer } from './ceiling-process.js';
import { hammer, median, type LoadResult } from './load.js';
import { evenRounds, roundOrder } from './paired-stats.js';
import { hasWrk } from './wrk.js';

/** Run settings; every one can be set by environment variable. */
export interface BenchSettings {
  /** Seconds per measured run (BENCH_DURATION, default 5). */
  durationSec: number;
  /** Seconds of warm-up per variant before its first measured run (BENCH_WARMUP, default 2). */
  warmupSec: number;
  /** Concurrent connections (BENCH_CONNECTIONS, default 50). */
  connections: number;
  /** Measured runs per variant, alternating (BENCH_ROUNDS, default 4; an odd count is rounded up, as for the long case). */
  rounds: number;
  /** Case names to run, comma-separated (BENCH_ONLY, default all). */
  only: readonly string[] | null;
  /** Write a CPU profile of each gateway child here (BENCH_CPU_PROF). */
  cpuProfDir: string | null;
  /** Fixed-request load generator: wrk when installed, unless BENCH_LOAD=autocannon. */
  load: 'wrk' | 'autocannon';
  /** l1-hit-long: seconds per run (BENCH_LONG_DURATION, default 10) and rounds (BENCH_LONG_ROUNDS, default 6; an odd count is rounded up, so each order runs equally often). */
  long: { durationSec: number; rounds: number };
}

/** Reads {@link BenchSettings} from the environment. */
export function settingsFromEnv(env: NodeJS.ProcessEnv): BenchSettings {
  const num = (name: string, fallback: number): number => {
    const value = Number(env[name]);
    return env[name] !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;
  };
  return {
    durationSec: num('BENCH_DURATION', 3),
    warmupSec: num('BENCH_WARMUP', 2),
    connections: Math.round(num('BENCH_CONNECTIONS', 50)),
    rounds: evenRounds(Math.round(num('BENCH_ROUNDS', 4))),
    only: env['BENCH_ONLY'] ? env['BENCH_ONLY'].split(',').map((s) => s.trim()) : null,
    cpuProfDir: env['BENCH_CPU_PROF'] ?? null,
    load: hasWrk && env['BENCH_LOAD'] !== 'autocannon' ? 'wrk' : 'autocannon',
    long: {
      durationSec: num('BENCH_LONG_DURATION', 10),
      rounds: evenRounds(Math.round(num('BENCH_LONG_ROUNDS', 6))),
    },
  };
}

/** One line of a case's table. Latencies in ms; absent figures print as a dash. */
export interface Row {
  label: string;
  rps?: number;
  p50?: number;
  p99?: number;
  /** Free-form figures (ratios, counts) for the JSON and the notes column. */
  extra?: Record<string, number | string>;
}

/** A target from the issue and whether this run met it. */
export interface Check {
  target: string;
  measured: string;
  met: boolean;
}

/** What each case returns. */
export interface CaseResult {
  name: string;
  rows: Row[];
  checks: Check[];
  notes?: string[];
}

/** Headers node:http adds to every answer by itself; the ceiling must not send them twice. */
const NODE_ADDED = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

/** GETs a path and records status, headers (as sent) and body, for the ceiling to replay. */
export function recordAnswer(
  port: number,
  path: string,
  headers: Record<string, string>,
): Promise<RecordedAnswer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const pairs: Array<[string, string]> = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          const name = res.rawHeaders[i]!;
          if (!NODE_ADDED.has(name.toLowerCase())) pairs.push([name, res.rawHeaders[i + 1]!]);
        }
        resolve({
          path,
          status: res.statusCode ?? 0,
          headers: pairs,
          body: Buffer.concat(chunks).toString('base64'),
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A server to load in a comparison. */
export interface Variant {
  label: string;
  port: number;
  path: string;
  /** Paths requested in turn (HammerOptions.paths). */
  paths?: readonly string[];
  headers: Record<string, string>;
  /** The server process's CPU time so far (µs), to report CPU per request: steadier than req/s on a busy host. */
  cpu?: () => Promise<number>;
}

/** Medians of each variant's measured runs, plus every run. */
export interface Compared {
  label: string;
  rps: number;
  p50: number;
  p99: number;
  /** Median server CPU time per request, µs (NaN when the variant has no cpu probe). */
  cpuPerRequest: number;
  /** Every measured run, in round order (run i of each variant was measured in round i). */
  runs: LoadResult[];
  /** Server CPU time per request of each run, µs, in round order. */
  cpuRuns: number[];
}

/**
 * Loads each variant in turn, round after round, after one warm-up each: noise that drifts over
 * the run (steal time, turbo) lands on both sides instead of one. Each round's order is
 * roundOrder's (reversed every other round), so list a variant next to the one it is compared
 * with. `firstRound` numbers the first round, for a caller that runs one round at a time. Four
 * short rounds by default rather than two long ones: a run disturbed by the host moves a median
 * of four much less than a median of two.
 */
export async function compare(
  settings: BenchSettings,
  variants: readonly Variant[],
  firstRound = 0,
): Promise<Compared[]> {
  const load = (variant: Variant, durationSec: number): Promise<LoadResult> =>
    hammer({
      port: variant.port,
      path: variant.path,
      ...(variant.paths === undefined ? {} : { paths: variant.paths }),
      headers: variant.headers,
      connections: settings.connections,
      durationSec,
      tool: settings.load,
    });
  // Warmed in the first round's order (as a caller starting its servers each round starts them):
  // where a process stands in that order moves its rate (hit-cases.ts, longHitCase).
  for (const i of roundOrder(variants.length, firstRound))
    await load(variants[i]!, settings.warmupSec);
  const runs = variants.map(() => [] as LoadResult[]);
  const cpu = variants.map(() => [] as number[]);
  for (let round = 0; round < settings.rounds; round++) {
    for (const i of roundOrder(variants.length, firstRound + round)) {
      const variant = variants[i]!;
      const before = (await variant.cpu?.()) ?? Number.NaN;
      const run = await load(variant, settings.durationSec);
      const after = (await variant.cpu?.()) ?? Number.NaN;
      runs[i]!.push(run);
      cpu[i]!.push((after - before) / run.requests);
    }
  }
  return variants.map((variant, i) => summarize(variant.label, runs[i]!, cpu[i]!));
}

/**
 * One variant's measured runs as a {@link Compared}: medians, and every run in round order.
 * Throws when any run had an answer other than 200 or a socket error: a ratio of failures
 * measures nothing.
 */
export function summarize(label: string, runs: LoadResult[], cpuRuns: number[]): Compared {
  for (const run of runs) {
    const bad = run.requests - (run.statuses['200'] ?? 0);
    if (bad > 0 || run.errors > 0)
      throw new Error(
        `${label}: ${bad} non-200 answers, ${run.errors} errors (${JSON.stringify(run.statuses)})`,
      );
  }
  return {
    label,
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    cpuPerRequest: median(cpuRuns),
    runs,
    cpuRuns,
  };
}

/** A row from a compared variant, with its ratios to a reference (the ceiling). */
export function rowOf(compared: Compared, reference?: Compared): Row {
  const extra: Record<string, number> = {};
  if (reference !== undefined) {
    extra['rpsRatio'] = round(compared.rps / reference.rps, 3);
    extra['p99Ratio'] = round(compared.p99 / reference.p99, 3);
  }
  if (Number.isFinite(compared.cpuPerRequest)) {
    extra['cpuUsPerReq'] = round(compared.cpuPerRequest, 1);
    if (reference !== undefined && Number.isFinite(reference.cpuPerRequest))
      extra['cpuRatio'] = round(compared.cpuPerRequest / reference.cpuPerRequest, 3);
  }
  extra['runsRps'] = compared.runs.length;
  return {
    label: compared.label,
    rps: Math.round(compared.rps),
    p50: round(compared.p50, 3),
    p99: round(compared.p99, 3),
    extra,
  };
}

/** Rounds to `digits` decimals. */
export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
