/**
 * `npm run bench`: runs every case (or those in BENCH_ONLY) and writes bench/results/latest.json
 * and latest.md. The process re-runs itself under `taskset -c 0` so the load generator keeps to
 * CPU 0 while every server under test runs on CPU 1.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { settingsFromEnv, type CaseResult } from './context.js';
import { Harness, LOAD_CPU } from './harness.js';
import { hitCase, longHitCase, signedCase } from './hit-cases.js';
import { instructionCase } from './instructions-case.js';
import { memoryCase } from './memory-case.js';
import { missCase } from './miss-case.js';
import { quotaCase } from './quota-case.js';
import { mixedCase } from './mixed-case.js';
import { workersCase } from './workers-case.js';
import { purgeCatchUpCase } from './purge-catchup-case.js';
import { configuredL1, lruL1, traceReplayCase } from './trace-replay-case.js';
import { canPin } from './pinned-child.js';
import { machine, toMarkdown, type BenchRun } from './report.js';

const RESULTS = new URL('../../bench/results/', import.meta.url);

/** Progress goes to stdout, a line at a time. */
function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

async function main(): Promise<void> {
  if (canPin && process.env['BENCH_PINNED'] !== '1') {
    const self = fileURLToPath(import.meta.url);
    const child = spawnSync('taskset', ['-c', String(LOAD_CPU), process.execPath, self], {
      stdio: 'inherit',
      env: { ...process.env, BENCH_PINNED: '1' },
    });
    process.exit(child.status ?? 1);
  }
  const settings = settingsFromEnv(process.env);
  const wanted = (name: string): boolean => settings.only === null || settings.only.includes(name);
  const h = new Harness(settings);
  const cases: CaseResult[] = [];
  const step = async (name: string, run: () => Promise<CaseResult>): Promise<void> => {
    if (!wanted(name)) return;
    const started = Date.now();
    say(`bench: ${name}…`);
    const result = await run();
    cases.push(result);
    for (const check of result.checks)
      say(`  ${check.met ? 'met ' : 'MISS'} ${check.target}: ${check.measured}`);
    say(`  (${Math.round((Date.now() - started) / 1000)} s)`);
  };
  try {
    // Main simulator: 2 workspaces of 2000 recordings, URLs valid for an hour (no refresh churn).
    const sim = await h.sim({
      workspaces: ['acme', 'globex'],
      recordingsPerWorkspace: 2000,
      urlScheme: 'cloud-cdn',
      urlLifetimeMs: 3_600_000,
    });
    await step('l1-hit', () => hitCase(h, sim, 'l1'));
    await step('l1-hit-long', () => longHitCase(h, sim));
    await step('l1-hit-instructions', () => instructionCase(h, sim));
    await step('l2-hit', () => hitCase(h, sim, 'l2'));
    await step('miss-path', () => missCase(h, sim));
    await step('mixed', () => mixedCase(h, sim));
    await step('workers', () => workersCase(h, sim));
    await step('quota', () => quotaCase(h, sim));
    if (wanted('signed-urls')) {
      const signedSim = await h.sim({
        workspaces: ['acme'],
        urlScheme: 'cloud-cdn',
        urlLifetimeMs: 4000,
      });
      const unsignedSim = await h.sim({ workspaces: ['acme'], urlScheme: 'unsigned' });
      await step('signed-urls', () => signedCase(h, signedSim, unsignedSim));
    }
    await step('memory', () => memoryCase(h));
    await step('purge-catchup', () => purgeCatchUpCase(h));
    await step('trace-replay', () =>
      Promise.resolve(traceReplayCase({ label: 'configured', make: configuredL1 }, lruL1)),
    );
  } finally {
    await h.close();
  }
  const run: BenchRun = { machine: machine(canPin), settings, cases };
  const markdown = toMarkdown(run);
  const name = settings.only === null ? 'latest' : `partial-${settings.only.join('-')}`;
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(new URL(`${name}.json`, RESULTS), `${JSON.stringify(run, null, 2)}\n`);
  writeFileSync(new URL(`${name}.md`, RESULTS), markdown);
  say(`\n${markdown}`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
