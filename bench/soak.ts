/**
 * `npm run soak`: a bounded soak run (SOAK_DURATION, default 3m). The simulator runs here, the
 * gateway runs as `node dist/main.js` in a child, with a private redis-server when one is
 * installed; mixed load with a fault schedule; RSS sampled from the child's /metrics. Writes
 * bench/results/soak-latest.{json,md} and exits 1 when a check fails.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseDuration } from '../src/config/duration.js';
import { startSimulator } from '../src/sim/server.js';
import { samples } from '../test/helpers/promql-names.js';
import { ALL_CPUS, scrape, startGateway, startRedis, type Child } from './processes.js';
import { setting } from './setup.js';
import { runLoad, type RedisOutage } from './soak-load.js';
import { faultSchedule, requestMix } from './soak-plan.js';
import { markdown, sample, summarize, type Sample } from './soak-report.js';

const L1_MAX_MIB = 32;
const SAMPLE_EVERY_MS = 5000;

function settingsFrom(env: NodeJS.ProcessEnv) {
  const duration = (raw: string): number | undefined => parseDuration(raw);
  return {
    compressMinBytes: env['SOAK_COMPRESS_MIN_BYTES'] ?? '1KiB',
    redisCommandTimeout: env['SOAK_REDIS_TIMEOUT'] ?? '100ms',
    durationSec: setting(env, 'SOAK_DURATION', 180_000, duration) / 1000,
    warmupSec: setting(env, 'SOAK_WARMUP', 30_000, duration) / 1000,
    targetRps: setting(env, 'SOAK_RPS', 300),
    connections: setting(env, 'SOAK_CONNECTIONS', 32),
    redis: env['SOAK_REDIS'] !== '0' && spawnSync('redis-server', ['--version']).status === 0,
    l1MaxBytes: `${L1_MAX_MIB}MiB`,
    workspaces: 4,
    recordingsPerWorkspace: 3000,
  };
}

/**
 * The gateway's config for the run: a small L1 bound, short TTLs so faults meet stale entries
 * often. SOAK_COMPRESS_MIN_BYTES and SOAK_REDIS_TIMEOUT try other values of those two settings.
 */
const gatewayConfig = (settings: ReturnType<typeof settingsFrom>): string => `
# No load balancer to drain from: stop at once, well inside the stopper's 5 s before SIGKILL.
server: { drainDelay: 0 }
upstream:
  timeouts: { connect: 1s, headers: 1s, body: 1s, deadline: 2s }
  maxResponseBytes: 1MiB
  breaker: { failureThreshold: 5, resetTimeout: 5s }
cache:
  l1: { maxBytes: ${settings.l1MaxBytes} }
  ttl: { list: 10s, recording: 30s, notFound: 30s }
  staleWhileRevalidate: 5s
  staleIfError: 10m
  compressMinBytes: ${settings.compressMinBytes}
  redis: { commandTimeout: ${settings.redisCommandTimeout} }
log: { level: warn }
`;

async function main(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const settings = settingsFrom(env);
  const { durationSec, warmupSec } = settings;
  const dir = mkdtempSync(join(tmpdir(), 'recgw-soak-'));
  const children: Child[] = [];
  // Signed URLs live 30 min, so every one served in the run must be valid when checked.
  const sim = await startSimulator({
    workspaces: ['acme', 'globex', 'initech', 'umbrella'],
    recordingsPerWorkspace: settings.recordingsPerWorkspace,
    urlLifetimeMs: 30 * 60_000,
  });
  try {
    let redis = settings.redis ? await startRedis() : undefined;
    if (redis !== undefined) children.push(redis);
    const log = join(dir, 'gateway.log');
    const gateway = await startGateway({
      config: gatewayConfig(settings),
      env: {
        UPSTREAM_URL: sim.baseUrlTemplate,
        LOG_LEVEL: 'warn',
        // SOAK_GATEWAY_NODE_FLAGS=--cpu-prof profiles the gateway.
        ...(env['SOAK_GATEWAY_NODE_FLAGS'] ? { NODE_OPTIONS: env['SOAK_GATEWAY_NODE_FLAGS'] } : {}),
        ...(redis === undefined ? {} : { REDIS_URL: redis.url }),
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

    const schedule = faultSchedule(durationSec, warmupSec, redis !== undefined);
    const outages: RedisOutage[] = [];
    const startedAt = Date.now();
    const elapsed = (): number => Date.now() - startedAt;
    const timers = schedule.flatMap((entry) => [
      setTimeout(() => {
        process.stdout.write(`soak: ${Math.round(elapsed() / 1000)} s: ${entry.name}\n`);
        if (entry.fault !== 'redis-down') return sim.faults.set(entry.fault);
        outages.push({ stoppedAt: elapsed(), recoveredAt: Infinity });
        void redis?.stop();
      }, entry.at * 1000),
      setTimeout(() => {
        if (entry.fault !== 'redis-down') return sim.faults.clear();
        void startRedis(redis?.port).then(async (child) => {
          children.push((redis = child));
          // Recovered once the gateway reports Redis up again: from then on it writes L2 again.
          while ((await sample(gateway.adminPort, 0).catch(() => undefined))?.redisUp !== 1)
            await sleep(250);
          outages[outages.length - 1]!.recoveredAt = elapsed();
        });
      }, entry.until * 1000),
    ]);
    const gatewaySamples: Sample[] = [];
    const sampler = (async () => {
      for (let next = 0; next < durationSec * 1000; next += SAMPLE_EVERY_MS) {
        await sleep(Math.max(0, startedAt + next - Date.now()));
        const s = await sample(gateway.adminPort, Math.round(next / 1000)).catch(() => undefined);
        if (s !== undefined) gatewaySamples.push(s);
      }
    })();

    const tally = await runLoad({
      port: gateway.port,
      next: requestMix(sim.data, sim.keys),
      sim,
      connections: settings.connections,
      rps: settings.targetRps,
      startedAt,
      endsAt: startedAt + durationSec * 1000,
      outages,
    });
    for (const timer of timers) clearTimeout(timer);
    sim.faults.clear();
    await sampler;
    const upstreamOutcomes: Record<string, number> = {};
    for (const { name, labels, value } of samples(await scrape(gateway.adminPort))) {
      const outcome = labels['outcome'] ?? 'other';
      if (name === 'recgw_upstream_requests_total')
        upstreamOutcomes[outcome] = (upstreamOutcomes[outcome] ?? 0) + value;
    }
    await gateway.stop();
    const summary = summarize({
      startedAt,
      settings,
      l1MaxMiB: L1_MAX_MIB,
      tally,
      samples: gatewaySamples,
      schedule,
      outages,
      upstreamCalls: sim.counters.total,
      upstreamOutcomes,
      gatewayErrorLogLines: readFileSync(log, 'utf8')
        .split('\n')
        .filter((line) => /"level":(50|60)\b|"level":"(error|fatal)"/.test(line)).length,
    });
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
