/**
 * `npm run soak`: a bounded soak run (SOAK_DURATION, default 3m). The simulator runs here, the
 * gateway runs as `node dist/main.js` in a child, with a private redis-server when one is
 * installed; mixed load with a fault schedule; RSS sampled from the child's /metrics. Writes
 * bench/results/soak-latest.{json,md} and exits 1 when a check fails.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseDuration } from '../src/config/duration.js';
import { startSimulator } from '../src/sim/server.js';
import { AnswerChecker } from './soak-check.js';
import { runLoad, Tally, type RedisOutage } from './soak-load.js';
import { RequestMix, faultSchedule } from './soak-plan.js';
import {
  ALL_CPUS,
  freePort,
  hasRedisServer,
  metricSeries,
  metricSum,
  scrape,
  startGateway,
  startRedis,
  type Child,
} from './processes.js';
import {
  markdown,
  quantile,
  rssFlatness,
  windows,
  type Sample,
  type SoakSummary,
} from './soak-report.js';

const MiB = 1024 * 1024;
const L1_MAX_MIB = 32;
const SAMPLE_EVERY_MS = 5000;

/**
 * The gateway's config for the run: a small L1 bound, short TTLs so faults meet stale entries
 * often. SOAK_COMPRESS_MIN_BYTES and SOAK_REDIS_TIMEOUT try other values of those two settings.
 */
const gatewayConfig = (env: NodeJS.ProcessEnv): string => `
# No load balancer to drain from: stop at once, well inside the stopper's 5 s before SIGKILL.
server: { drainDelay: 0 }
upstream:
  timeouts: { connect: 1s, headers: 1s, body: 1s, deadline: 2s }
  maxResponseBytes: 1MiB
  breaker: { failureThreshold: 5, resetTimeout: 5s }
cache:
  l1: { maxBytes: ${L1_MAX_MIB}MiB }
  ttl: { list: 10s, recording: 30s, notFound: 30s }
  staleWhileRevalidate: 5s
  staleIfError: 10m
  compressMinBytes: ${env['SOAK_COMPRESS_MIN_BYTES'] ?? '1KiB'}
  redis: { commandTimeout: ${env['SOAK_REDIS_TIMEOUT'] ?? '100ms'} }
log: { level: warn }
`;

function setting(
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

async function sample(adminPort: number, t: number): Promise<Sample> {
  const text = await scrape(adminPort);
  const mib = (bytes: number): number => Math.round((bytes / MiB) * 10) / 10;
  return {
    t,
    rssMiB: mib(metricSum(text, 'process_resident_memory_bytes')),
    heapUsedMiB: mib(metricSum(text, 'nodejs_heap_size_used_bytes')),
    externalMiB: mib(metricSum(text, 'nodejs_external_memory_bytes')),
    l1MiB: mib(metricSum(text, 'recgw_cache_bytes', 'tier="l1"')),
    l1Entries: metricSum(text, 'recgw_cache_entries', 'tier="l1"'),
    circuit: metricSum(text, 'recgw_circuit_state'),
    redisUp: metricSum(text, 'recgw_redis_up'),
    redisErrors: metricSum(text, 'recgw_redis_errors_total'),
    lagP99Ms: Math.round(metricSum(text, 'nodejs_eventloop_lag_p99_seconds') * 10_000) / 10,
  };
}

async function main(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const durationMs = setting(env, 'SOAK_DURATION', 180_000, (raw) => parseDuration(raw));
  const warmupMs = setting(env, 'SOAK_WARMUP', 30_000, (raw) => parseDuration(raw));
  const rps = setting(env, 'SOAK_RPS', 300);
  const connections = setting(env, 'SOAK_CONNECTIONS', 32);
  const withRedis = env['SOAK_REDIS'] !== '0' && hasRedisServer();
  const settings = {
    compressMinBytes: env['SOAK_COMPRESS_MIN_BYTES'] ?? '1KiB',
    redisCommandTimeout: env['SOAK_REDIS_TIMEOUT'] ?? '100ms',
    durationSec: durationMs / 1000,
    warmupSec: warmupMs / 1000,
    targetRps: rps,
    connections,
    redis: withRedis,
    l1MaxBytes: `${L1_MAX_MIB}MiB`,
    workspaces: 4,
    recordingsPerWorkspace: 3000,
  };
  const dir = mkdtempSync(join(tmpdir(), 'recgw-soak-'));
  const children: Child[] = [];
  // Signed URLs live 30 min, so every one served in the run must be valid when checked.
  const sim = await startSimulator({
    workspaces: ['acme', 'globex', 'initech', 'umbrella'],
    recordingsPerWorkspace: 3000,
    urlLifetimeMs: 30 * 60_000,
  });
  try {
    let redis: Child | undefined;
    const redisPort = withRedis ? await freePort() : 0;
    if (withRedis) children.push((redis = await startRedis(redisPort)));
    const config = gatewayConfig(env);
    const log = join(dir, 'gateway.log');
    const gateway = await startGateway({
      config,
      env: {
        UPSTREAM_URL: sim.baseUrlTemplate,
        LOG_LEVEL: 'warn',
        // SOAK_GATEWAY_NODE_FLAGS=--cpu-prof profiles the gateway.
        ...(env['SOAK_GATEWAY_NODE_FLAGS'] ? { NODE_OPTIONS: env['SOAK_GATEWAY_NODE_FLAGS'] } : {}),
        ...(withRedis ? { REDIS_URL: `redis://127.0.0.1:${redisPort}` } : {}),
      },
      log,
      cpus: ALL_CPUS,
      // The production build (npm run build), as the image runs it.
      main: fileURLToPath(new URL('../../dist/main.js', import.meta.url)),
    });
    children.push(gateway);
    process.stdout.write(
      `soak: ${JSON.stringify(settings)}; gateway pid ${gateway.pid}, log ${log}\n`,
    );

    const schedule = faultSchedule(durationMs / 1000, warmupMs / 1000, withRedis);
    const outages: RedisOutage[] = [];
    const startedAt = Date.now();
    const endsAt = startedAt + durationMs;
    const elapsed = (): number => Date.now() - startedAt;
    const samples: Sample[] = [];
    const tally = new Tally(10_000);
    const timers: NodeJS.Timeout[] = [];
    let redisChild = redis;
    for (const entry of schedule) {
      timers.push(
        setTimeout(() => {
          process.stdout.write(`soak: ${Math.round(elapsed() / 1000)} s: ${entry.name}\n`);
          if (entry.fault === 'redis-down') {
            const outage = { stoppedAt: elapsed(), recoveredAt: Infinity };
            outages.push(outage);
            void redisChild?.stop();
          } else sim.faults.set(entry.fault);
        }, entry.at * 1000),
      );
      timers.push(
        setTimeout(() => {
          if (entry.fault !== 'redis-down') return sim.faults.clear();
          void startRedis(redisPort).then(async (child) => {
            children.push((redisChild = child));
            // Recovered once the gateway reports Redis up again: from then on it writes L2 again.
            while ((await sample(gateway.adminPort, 0).catch(() => undefined))?.redisUp !== 1)
              await sleep(250);
            outages[outages.length - 1]!.recoveredAt = elapsed();
          });
        }, entry.until * 1000),
      );
    }
    const sampler = (async () => {
      for (let next = 0; next < durationMs; next += SAMPLE_EVERY_MS) {
        await sleep(Math.max(0, startedAt + next - Date.now()));
        const s = await sample(gateway.adminPort, Math.round(next / 1000)).catch(() => undefined);
        if (s !== undefined) samples.push(s);
      }
    })();

    await runLoad({
      port: gateway.port,
      mix: new RequestMix(sim.data, sim.keys),
      checker: new AnswerChecker(sim),
      tally,
      connections,
      rps,
      startedAt,
      endsAt,
      outages,
    });
    for (const timer of timers) clearTimeout(timer);
    sim.faults.clear();
    await sampler;
    const metrics = await scrape(gateway.adminPort);
    const outcomes: Record<string, number> = {};
    for (const [labels, value] of Object.entries(
      metricSeries(metrics, 'recgw_upstream_requests_total'),
    )) {
      const outcome = /outcome="([^"]+)"/.exec(labels)?.[1] ?? 'other';
      outcomes[outcome] = (outcomes[outcome] ?? 0) + value;
    }
    await gateway.stop();
    const errorLines = readFileSync(log, 'utf8')
      .split('\n')
      .filter((line) => /"level":(50|60)\b|"level":"(error|fatal)"/.test(line)).length;

    const rss = rssFlatness(samples, L1_MAX_MIB, warmupMs / 1000);
    const summary: SoakSummary = {
      startedAt: new Date(startedAt).toISOString(),
      node: process.versions.node,
      durationSec: durationMs / 1000,
      settings,
      requests: tally.requests,
      rps: tally.requests / (durationMs / 1000),
      statuses: tally.statuses,
      byKind: tally.byKind,
      latencyMs: {
        p50: quantile(tally.latencies, 0.5),
        p99: quantile(tally.latencies, 0.99),
        max: Math.max(0, ...tally.latencies),
      },
      upstreamCalls: sim.counters.total,
      upstreamOutcomes: outcomes,
      fiveXxCachedBefore: tally.fiveXxCachedBefore,
      fiveXxMaybeEvicted: tally.fiveXxMaybeEvicted,
      invalidAnswers: tally.invalid,
      nulledUrls: tally.nulledUrls,
      transportErrors: tally.transportErrors,
      gatewayErrorLogLines: errorLines,
      ...windows(tally, schedule),
      redisOutages: outages,
      rss,
      examples: tally.examples,
      pass: {
        noFiveXxForCached: tally.fiveXxCachedBefore === 0,
        noInvalidData: tally.invalid === 0,
        rssFlat: rss.maxDeviationPct !== null && rss.maxDeviationPct <= 10,
      },
    };
    const results = fileURLToPath(new URL('../../bench/results/', import.meta.url));
    mkdirSync(results, { recursive: true });
    writeFileSync(join(results, 'soak-latest.json'), `${JSON.stringify(summary, null, 2)}\n`);
    const report = markdown(summary);
    writeFileSync(join(results, 'soak-latest.md'), report);
    process.stdout.write(report);
    return Object.values(summary.pass).every(Boolean);
  } finally {
    for (const child of children.reverse()) await child.stop();
    await sim.close();
    if (env['SOAK_KEEP'] !== '1') rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (passed) => process.exit(passed ? 0 : 1),
  (error: unknown) => {
    console.error(error instanceof Error ? error.stack : String(error));
    process.exit(2);
  },
);
