/** Turns the soak run's tallies and samples into the summary (JSON) and the report (Markdown). */
import type { ScheduledFault } from './soak-plan.js';
import type { RedisOutage, Tally } from './soak-load.js';

/** One sample of the gateway's process and cache, every few seconds. */
export interface Sample {
  /** Seconds since the start. */
  readonly t: number;
  readonly rssMiB: number;
  readonly heapUsedMiB: number;
  /** Buffers outside the V8 heap (cached bodies and their encodings live here). */
  readonly externalMiB: number;
  readonly l1MiB: number;
  readonly l1Entries: number;
  readonly circuit: number;
  readonly redisUp: number;
  /** Redis commands failed or timed out so far. */
  readonly redisErrors: number;
  /** Event-loop lag p99 over the last interval, ms. */
  readonly lagP99Ms: number;
}

/** Everything the run reports. */
export interface SoakSummary {
  readonly startedAt: string;
  readonly node: string;
  readonly durationSec: number;
  readonly settings: Record<string, unknown>;
  readonly requests: number;
  readonly rps: number;
  readonly statuses: Record<string, number>;
  readonly byKind: Record<string, Record<string, number>>;
  readonly latencyMs: { p50: number; p99: number; max: number };
  readonly upstreamCalls: number;
  readonly upstreamOutcomes: Record<string, number>;
  readonly fiveXxCachedBefore: number;
  readonly fiveXxMaybeEvicted: number;
  readonly invalidAnswers: number;
  readonly nulledUrls: number;
  readonly transportErrors: number;
  readonly gatewayErrorLogLines: number;
  readonly faults: ReadonlyArray<
    ScheduledFault & { window: { requests: number; fiveXx: number; p99: number } }
  >;
  readonly redisOutages: readonly RedisOutage[];
  readonly windows: ReadonlyArray<{
    t: number;
    requests: number;
    fiveXx: number;
    p50: number;
    p99: number;
  }>;
  readonly rss: {
    warmupEndSec: number | null;
    baselineMiB: number | null;
    maxDeviationPct: number | null;
    series: readonly Sample[];
  };
  readonly examples: readonly string[];
  readonly pass: { noFiveXxForCached: boolean; noInvalidData: boolean; rssFlat: boolean };
}

/** The q-quantile (0..1) of unsorted values, nearest rank. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

const round = (value: number, digits = 1): number =>
  Math.round(value * 10 ** digits) / 10 ** digits;

/**
 * RSS after warm-up: warm-up ends at the first sample where L1 holds at least 90% of its bound
 * (and no earlier than `minWarmupSec`); the baseline is the median of the next three samples;
 * the deviation is the largest distance from it over every later sample.
 */
export function rssFlatness(
  samples: readonly Sample[],
  l1BoundMiB: number,
  minWarmupSec: number,
): SoakSummary['rss'] {
  const end = samples.findIndex((s) => s.t >= minWarmupSec && s.l1MiB >= 0.9 * l1BoundMiB);
  if (end < 0 || end + 3 > samples.length)
    return { warmupEndSec: null, baselineMiB: null, maxDeviationPct: null, series: samples };
  const after = samples.slice(end);
  const baseline = quantile(
    after.slice(0, 3).map((s) => s.rssMiB),
    0.5,
  );
  const deviation = Math.max(...after.map((s) => Math.abs(s.rssMiB - baseline) / baseline));
  return {
    warmupEndSec: samples[end]!.t,
    baselineMiB: round(baseline),
    maxDeviationPct: round(deviation * 100),
    series: samples,
  };
}

/** The per-window series and the figures of each fault window. */
export function windows(
  tally: Tally,
  schedule: readonly ScheduledFault[],
): Pick<SoakSummary, 'windows' | 'faults'> {
  const seconds = tally.windowMs / 1000;
  const series = tally.windows.map((w, i) => ({
    t: i * seconds,
    requests: w.requests,
    fiveXx: w.fiveXx,
    p50: round(quantile(w.latencies, 0.5), 2),
    p99: round(quantile(w.latencies, 0.99), 2),
  }));
  const faults = schedule.map((fault) => {
    const inside = tally.windows.slice(
      Math.floor(fault.at / seconds),
      Math.ceil(fault.until / seconds),
    );
    return {
      ...fault,
      window: {
        requests: inside.reduce((sum, w) => sum + w.requests, 0),
        fiveXx: inside.reduce((sum, w) => sum + w.fiveXx, 0),
        p99: round(
          quantile(
            inside.flatMap((w) => w.latencies),
            0.99,
          ),
          2,
        ),
      },
    };
  });
  return { windows: series, faults };
}

/** The Markdown report. */
export function markdown(s: SoakSummary): string {
  const pass = (ok: boolean): string => (ok ? 'pass' : '**FAIL**');
  const lines = [
    `# Soak run, ${s.startedAt}`,
    '',
    `${s.durationSec} s of mixed load on Node ${s.node}: ${s.requests} requests (${round(s.rps)} req/s), ${s.upstreamCalls} upstream calls.`,
    `Settings: ${Object.entries(s.settings)
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(', ')}.`,
    '',
    '| check | result | |',
    '|---|---|---|',
    `| 5xx for entries cached before | ${s.fiveXxCachedBefore} | ${pass(s.pass.noFiveXxForCached)} |`,
    `| invalid data served | ${s.invalidAnswers} | ${pass(s.pass.noInvalidData)} |`,
    `| RSS max deviation after warm-up (≤ 10%) | ${s.rss.maxDeviationPct ?? 'n/a'}% of ${s.rss.baselineMiB ?? 'n/a'} MiB (warm-up ended at ${s.rss.warmupEndSec ?? 'n/a'} s) | ${pass(s.pass.rssFlat)} |`,
    `| latency p50 / p99 / max | ${round(s.latencyMs.p50, 2)} / ${round(s.latencyMs.p99, 2)} / ${round(s.latencyMs.max, 0)} ms | |`,
    `| 5xx for resources seen before a Redis outage (may have been evicted) | ${s.fiveXxMaybeEvicted} | |`,
    `| transcoded_url served as null | ${s.nulledUrls} | |`,
    `| client transport errors | ${s.transportErrors} | |`,
    `| gateway error log lines | ${s.gatewayErrorLogLines} | |`,
    '',
    `Statuses: ${Object.entries(s.statuses)
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ')}.`,
    '',
    '| request kind | statuses |',
    '|---|---|',
    ...Object.entries(s.byKind).map(
      ([kind, statuses]) =>
        `| ${kind} | ${Object.entries(statuses)
          .map(([k, v]) => `${k}: ${v}`)
          .join(', ')} |`,
    ),
    '',
    `Upstream outcomes (gateway metrics): ${Object.entries(s.upstreamOutcomes)
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ')}.`,
    '',
    '| fault | from (s) | to (s) | requests | 5xx | p99 (ms) |',
    '|---|---|---|---|---|---|',
    ...s.faults.map(
      (f) =>
        `| ${f.name} | ${f.at} | ${f.until} | ${f.window.requests} | ${f.window.fiveXx} | ${f.window.p99} |`,
    ),
    '',
    '| t (s) | RSS (MiB) | heap used (MiB) | external (MiB) | L1 (MiB) | L1 entries | circuit | redis_up | Redis errors | loop lag p99 (ms) |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...s.rss.series.map(
      (r) =>
        `| ${r.t} | ${r.rssMiB} | ${r.heapUsedMiB} | ${r.externalMiB} | ${r.l1MiB} | ${r.l1Entries} | ${r.circuit} | ${r.redisUp} | ${r.redisErrors} | ${r.lagP99Ms} |`,
    ),
  ];
  if (s.examples.length > 0) lines.push('', 'Examples:', '', ...s.examples.map((e) => `- ${e}`));
  return `${lines.join('\n')}\n`;
}
