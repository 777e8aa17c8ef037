/** What the soak run measures: the gateway's samples, the summary (JSON) and the report (Markdown). */
import { median, quantile } from './compare.js';
import { metricSum, scrape } from './processes.js';
import type { RedisOutage, Tally } from './soak-load.js';
import type { ScheduledFault } from './soak-plan.js';

const MiB = 1024 * 1024;
const WINDOW_MS = 10_000;

const round = (value: number, digits = 1): number =>
  Math.round(value * 10 ** digits) / 10 ** digits;

/** The gateway's process and cache as its /metrics show them, `t` seconds into the run. */
export async function sample(adminPort: number, t: number) {
  const text = await scrape(adminPort);
  const sum = (name: string, labels?: string): number => metricSum(text, name, labels);
  const mib = (name: string, labels?: string): number => round(sum(name, labels) / MiB);
  return {
    t,
    rssMiB: mib('process_resident_memory_bytes'),
    heapUsedMiB: mib('nodejs_heap_size_used_bytes'),
    // Buffers outside the V8 heap: cached bodies and their encodings live here.
    externalMiB: mib('nodejs_external_memory_bytes'),
    l1MiB: mib('recgw_cache_bytes', 'tier="l1"'),
    l1Entries: sum('recgw_cache_entries', 'tier="l1"'),
    circuit: sum('recgw_circuit_state'),
    redisUp: sum('recgw_redis_up'),
    redisErrors: sum('recgw_redis_errors_total'),
    lagP99Ms: round(sum('nodejs_eventloop_lag_p99_seconds') * 1000),
  };
}

/** One sample of the gateway. */
export type Sample = Awaited<ReturnType<typeof sample>>;

/**
 * RSS after warm-up: warm-up ends at the first sample where L1 holds at least 90% of its bound
 * (and no earlier than `minWarmupSec`); the baseline is the median of the next three samples;
 * the deviation is the largest distance from it over every later sample.
 */
function rssFlatness(samples: readonly Sample[], l1BoundMiB: number, minWarmupSec: number) {
  const end = samples.findIndex((s) => s.t >= minWarmupSec && s.l1MiB >= 0.9 * l1BoundMiB);
  if (end < 0 || end + 3 > samples.length)
    return { warmupEndSec: null, baselineMiB: null, maxDeviationPct: null, series: samples };
  const after = samples.slice(end);
  const baseline = median(after.slice(0, 3).map((s) => s.rssMiB));
  const deviation = Math.max(...after.map((s) => Math.abs(s.rssMiB - baseline) / baseline));
  return {
    warmupEndSec: samples[end]!.t,
    baselineMiB: round(baseline),
    maxDeviationPct: round(deviation * 100),
    series: samples,
  };
}

/** Requests, 5xx and latency quantiles of some answers. */
function stats(answers: Tally['answers']) {
  const ms = answers.map((a) => a.ms);
  return {
    requests: answers.length,
    fiveXx: answers.filter((a) => a.status >= 500).length,
    p50: round(quantile(ms, 0.5), 2),
    p99: round(quantile(ms, 0.99), 2),
  };
}

/** What the run saw, as soak.ts collects it. */
export interface RunFacts {
  readonly startedAt: number;
  readonly settings: { durationSec: number; warmupSec: number } & Record<string, unknown>;
  readonly l1MaxMiB: number;
  readonly tally: Tally;
  readonly samples: readonly Sample[];
  readonly schedule: readonly ScheduledFault[];
  readonly outages: readonly RedisOutage[];
  readonly upstreamCalls: number;
  readonly upstreamOutcomes: Record<string, number>;
  readonly gatewayErrorLogLines: number;
}

/** Everything the run reports, with its three checks. */
export function summarize(run: RunFacts) {
  const { tally, settings } = run;
  const statuses: Record<string, number> = {};
  const byKind: Record<string, Record<string, number>> = {};
  for (const { kind, status } of tally.answers) {
    statuses[status] = (statuses[status] ?? 0) + 1;
    const ofKind = (byKind[kind] ??= {});
    ofKind[status] = (ofKind[status] ?? 0) + 1;
  }
  const latencies = tally.answers.map((a) => a.ms);
  // Each fault's figures over the whole 10 s windows it touches.
  const faults = run.schedule.map((fault) => {
    const from = Math.floor((fault.at * 1000) / WINDOW_MS) * WINDOW_MS;
    const to = Math.ceil((fault.until * 1000) / WINDOW_MS) * WINDOW_MS;
    return { ...fault, window: stats(tally.answers.filter((a) => a.at >= from && a.at < to)) };
  });
  const buckets: Array<Tally['answers']> = [];
  for (const answer of tally.answers)
    (buckets[Math.floor(answer.at / WINDOW_MS)] ??= []).push(answer);
  const rss = rssFlatness(run.samples, run.l1MaxMiB, settings.warmupSec);
  return {
    startedAt: new Date(run.startedAt).toISOString(),
    node: process.versions.node,
    durationSec: settings.durationSec,
    settings,
    requests: tally.answers.length,
    rps: tally.answers.length / settings.durationSec,
    statuses,
    byKind,
    latencyMs: {
      p50: quantile(latencies, 0.5),
      p99: quantile(latencies, 0.99),
      max: quantile(latencies, 1),
    },
    upstreamCalls: run.upstreamCalls,
    upstreamOutcomes: run.upstreamOutcomes,
    fiveXxCachedBefore: tally.fiveXxCachedBefore,
    fiveXxMaybeEvicted: tally.fiveXxMaybeEvicted,
    invalidAnswers: tally.invalid,
    nulledUrls: tally.nulledUrls,
    transportErrors: tally.transportErrors,
    gatewayErrorLogLines: run.gatewayErrorLogLines,
    faults,
    redisOutages: run.outages,
    windows: Array.from(buckets, (w = [], i) => ({ t: (i * WINDOW_MS) / 1000, ...stats(w) })),
    rss,
    examples: tally.examples,
    pass: {
      noFiveXxForCached: tally.fiveXxCachedBefore === 0,
      noInvalidData: tally.invalid === 0,
      rssFlat: rss.maxDeviationPct !== null && rss.maxDeviationPct <= 10,
    },
  };
}

/** The summary of a run. */
export type SoakSummary = ReturnType<typeof summarize>;

const pairs = (record: Record<string, unknown>, sep = ': '): string =>
  Object.entries(record)
    .map(([k, v]) => `${k}${sep}${String(v)}`)
    .join(', ');

/** The Markdown report. */
export function markdown(s: SoakSummary): string {
  const pass = (ok: boolean): string => (ok ? 'pass' : '**FAIL**');
  const lines = [
    `# Soak run, ${s.startedAt}`,
    '',
    `${s.durationSec} s of mixed load on Node ${s.node}: ${s.requests} requests (${round(s.rps)} req/s), ${s.upstreamCalls} upstream calls.`,
    `Settings: ${pairs(s.settings, '=')}.`,
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
    `Statuses: ${pairs(s.statuses)}.`,
    '',
    '| request kind | statuses |',
    '|---|---|',
    ...Object.entries(s.byKind).map(([kind, statuses]) => `| ${kind} | ${pairs(statuses)} |`),
    '',
    `Upstream outcomes (gateway metrics): ${pairs(s.upstreamOutcomes)}.`,
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
    ...s.rss.series.map((r) => `| ${Object.values(r).join(' | ')} |`),
  ];
  if (s.examples.length > 0) lines.push('', 'Examples:', '', ...s.examples.map((e) => `- ${e}`));
  return `${lines.join('\n')}\n`;
}
