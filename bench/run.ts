/**
 * `npm run bench`: each case answers one user's question, in under a minute with the defaults.
 * BENCH_ONLY (comma-separated case names) picks cases; BENCH_DURATION (s per run, 3),
 * BENCH_ROUNDS (4), BENCH_WARMUP (s, 1) and BENCH_CONNECTIONS (50) set the load;
 * BENCH_REQUEST_LOG=1 compares with request logs on. Prints a Markdown report and writes it to
 * bench/results/latest.md (partial-<cases>.md with BENCH_ONLY).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { startSimulator } from '../src/sim/server.js';
import type { Settings } from './compare.js';
import { adaptiveTtlCase } from './adaptive-ttl-case.js';
import { l1HitCase, l2HitCase } from './hit-case.js';
import { fleetCase } from './fleet-case.js';
import { memoryCase } from './memory-case.js';
import { missCase } from './miss-case.js';
import { pinSelf } from './processes.js';
import { quotaCase } from './quota-case.js';
import { host, markdown, type CaseResult } from './report.js';
import { lazyRedis, setting, type Bench } from './setup.js';
import { workersCase } from './workers-case.js';
import { configuredL1, traceReplayCase } from './trace-replay-case.js';
import { zipfCase } from './zipf-case.js';

const CASES: Record<string, (b: Bench) => Promise<CaseResult>> = {
  'l1-list': (b) => l1HitCase(b, 'list'),
  'l1-recording': (b) => l1HitCase(b, 'recording'),
  'l2-hit': l2HitCase,
  miss: missCase,
  zipf: zipfCase,
  memory: memoryCase,
  quota: quotaCase,
  workers: workersCase,
  fleet: fleetCase,
  'trace-replay': () => Promise.resolve(traceReplayCase(configuredL1())),
  'adaptive-ttl': adaptiveTtlCase,
};

async function main(): Promise<void> {
  const only = process.env['BENCH_ONLY']?.split(',').map((s) => s.trim());
  const unknown = only?.filter((name) => !(name in CASES)) ?? [];
  if (unknown.length > 0)
    throw new Error(`unknown case ${unknown.join(', ')}; cases: ${Object.keys(CASES).join(', ')}`);
  const env = process.env;
  const settings: Settings = {
    seconds: setting(env, 'BENCH_DURATION', 3),
    rounds: Math.round(setting(env, 'BENCH_ROUNDS', 4)),
    warmup: setting(env, 'BENCH_WARMUP', 1),
    connections: Math.round(setting(env, 'BENCH_CONNECTIONS', 50)),
  };
  const header = [
    host(),
    pinSelf(),
    `autocannon, ${settings.connections} connections, pipelining 1; ${settings.rounds} rounds of ${settings.seconds} s per server after ${settings.warmup} s of warm-up, the order reversed every other round; medians of the rounds.`,
  ];
  const sim = await startSimulator({
    workspaces: ['acme', 'globex'],
    recordingsPerWorkspace: 2000,
    urlScheme: 'cloud-cdn',
    urlLifetimeMs: 3_600_000,
  });
  const { redis, stop } = lazyRedis();
  const b: Bench = {
    settings,
    sim,
    redis,
    requestLog: process.env['BENCH_REQUEST_LOG'] === '1',
    started: [],
  };
  const results: CaseResult[] = [];
  try {
    for (const [name, run] of Object.entries(CASES)) {
      if (only !== undefined && !only.includes(name)) continue;
      process.stdout.write(`bench: ${name}…\n`);
      const started = Date.now();
      try {
        const result = await run(b);
        result.seconds = Math.round((Date.now() - started) / 1000);
        results.push(result);
      } finally {
        await Promise.all(b.started.splice(0).map((c) => c.stop()));
      }
    }
  } finally {
    await stop();
    await sim.close();
  }
  const report = markdown(results, header);
  const results_ = new URL('../../bench/results/', import.meta.url);
  mkdirSync(results_, { recursive: true });
  writeFileSync(
    new URL(only === undefined ? 'latest.md' : `partial-${only.join('-')}.md`, results_),
    report,
  );
  process.stdout.write(`\n${report}\n`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
