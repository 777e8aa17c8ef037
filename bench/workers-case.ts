/**
 * One worker against two (server.workers): the real `main.js`, started by the bench with
 * WORKERS=1 and WORKERS=2, both allowed on every core of this host, answering L1 hits of a list
 * page, on fresh processes every round in alternating start order (fresh-rounds.ts says why). On
 * a 2-core host the load generator takes one of the two cores, so this shows the cost or
 * gain of the cluster path (the primary's connection hand-off, a second process contending with
 * the load generator) here, not how workers scale on a many-core pod; the notes say so.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { round, rowOf, type CaseResult } from './context.js';
import { freePort } from './free-port.js';
import { freshRounds, roundVariant, type RoundContext, type RoundServer } from './fresh-rounds.js';
import type { Harness, SimHandle } from './harness.js';
import { clientHeaders, hitPaths } from './hit-cases.js';
import { canPin, RUNTIME_ENV } from './pinned-child.js';

/** The gateway's entry point, compiled with the bench from the same sources (dist-bench/src/main.js). */
const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const READY_TIMEOUT_MS = 20_000;

/**
 * A gateway process (a primary and its workers when workers > 1); `cpu` is from its own /metrics,
 * summed over the workers.
 */
interface Running extends RoundServer {
  stop: () => Promise<void>;
}

/** What each round's gateways are started from. */
interface WorkersStart extends RoundContext {
  readonly sim: SimHandle;
}

async function scrape(adminPort: number): Promise<string | undefined> {
  try {
    const res = await request(`http://127.0.0.1:${adminPort}/metrics`);
    return res.statusCode === 200 ? await res.body.text() : (await res.body.dump(), undefined);
  } catch {
    return undefined;
  }
}

function sample(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.slice(name.length + 1));
}

/**
 * Starts the gateway (`main.js`) on every core (the bench itself is pinned to the load core),
 * waits for all workers, and gives it to the harness, whose release ends the round.
 */
async function start({ h, sim }: WorkersStart, workers: number): Promise<Running> {
  const [port, adminPort] = [await freePort(), await freePort()];
  // os.cpus(), not availableParallelism(): the latter counts this process's pinning (one core).
  const cores = Array.from({ length: cpus().length }, (_, i) => i).join(',');
  const env = {
    ...process.env,
    ...RUNTIME_ENV,
    WORKERS: String(workers),
    HOST: '127.0.0.1',
    PORT: String(port),
    ADMIN_HOST: '127.0.0.1',
    ADMIN_PORT: String(adminPort),
    UPSTREAM_URL: sim.baseUrlTemplate,
    LOG_LEVEL: 'info',
  };
  // stdout to /dev/null: the request log is written as in production, and not read by the bench's core.
  const options = {
    env,
    stdio: ['ignore', 'ignore', 'inherit'] as ['ignore', 'ignore', 'inherit'],
  };
  // Children inherit the bench's pinning to the load core; widen it back to every core.
  const child: ChildProcess = canPin
    ? spawn('taskset', ['-c', cores, process.execPath, MAIN], options)
    : spawn(process.execPath, [MAIN], options);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const text = await scrape(adminPort);
    // With workers, the primary's gauge; a single process is ready once it scrapes at all.
    if (text !== undefined && (workers === 1 || sample(text, 'recgw_workers_ready') === workers))
      break;
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`gateway with ${workers} worker(s) did not become ready`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return h.adopt({
    port,
    pid: child.pid ?? -1,
    cpu: async () => sample((await scrape(adminPort)) ?? '', 'process_cpu_seconds_total') * 1e6,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  });
}

/** The workers case: L1 hits of a list page with one worker and with two, on every core. */
export async function workersCase(h: Harness, sim: SimHandle): Promise<CaseResult> {
  const { label, path } = hitPaths(sim)[0]!;
  // Each worker's first request for the page is its miss; each round's warm-up run makes them.
  const [byRole] = await freshRounds(
    h.settings,
    { h, sim },
    [{ label, path }],
    clientHeaders(sim),
    [
      roundVariant('one', '1 worker, every core', (s: WorkersStart) => start(s, 1)),
      roundVariant('two', '2 workers, every core', (s: WorkersStart) => start(s, 2)),
    ],
  );
  const [single, pair] = [byRole!.get('one')!, byRole!.get('two')!];
  const ratio = pair.rps / single.rps;
  return {
    name: 'workers',
    rows: [rowOf(single), rowOf(pair, single)],
    checks: [
      {
        target: 'two workers serve at least as many L1 hits/s as one (this host)',
        measured: `${round(ratio, 3)}×`,
        met: ratio >= 1,
      },
    ],
    notes: [
      `Host: ${cpus().length} cores, shared by the load generator (pinned to CPU 0), the simulator and the gateway's processes. ` +
        'The second worker competes with the load generator for its core, so this ratio shows what the cluster path costs or gains on this host, ' +
        'not the scaling on a pod whose cores all serve traffic. ' +
        'CPU per request is summed over the primary and every worker (process_cpu_seconds_total from the aggregated /metrics).',
    ],
  };
}
