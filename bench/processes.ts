/**
 * The processes the bench and the soak start: gateways (the real entry point, `main.js`, with a
 * config file), the reference servers (reference.ts), a private redis-server, and what is read
 * from them (/metrics, RSS, CPU time). Where taskset exists the bench keeps itself (load
 * generator, simulator, Redis) on CPU 0 and the servers under test on CPU 1, so the load and
 * the server do not take turns on one core.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { freePort, spawnRedisServer, waitFor } from '../test/helpers/redis.js';
import { RUNTIME_ENV } from '../test/helpers/runtime-env.js';

/** A process the bench started and must stop. */
export interface Child {
  readonly process: ChildProcess;
  readonly pid: number;
  /** SIGTERM (SIGKILL after 5 s), resolving once it has exited. */
  stop(): Promise<void>;
}

/** A server under test: where it listens. */
export interface Server extends Child {
  readonly port: number;
}

/** A gateway: its public and admin ports. */
export interface Gateway extends Server {
  readonly adminPort: number;
}

const canPin = cpus().length > 1 && spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0;
/** The cores the servers under test run on (every core when nothing pins). */
export const SERVER_CPUS = canPin ? '1' : null;
/** Every core, for a gateway with several workers. */
export const ALL_CPUS = canPin ? `0-${cpus().length - 1}` : null;

/** Keeps this process (every thread) on CPU 0, where the load generator runs; children inherit it. */
export function pinSelf(): string {
  if (!canPin) return 'not pinned (no taskset or one core)';
  spawnSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
  return 'load generator, simulator and Redis on CPU 0; servers under test on CPU 1';
}

function run(args: string[], cpuList: string | null, options: Parameters<typeof spawn>[2]) {
  return cpuList === null
    ? spawn(args[0]!, args.slice(1), options)
    : spawn('taskset', ['-c', cpuList, ...args], options);
}

function child(process: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Child {
  const exited = new Promise<void>((resolve) => process.once('exit', () => resolve()));
  return {
    process,
    pid: process.pid ?? -1,
    async stop() {
      if (process.exitCode !== null || process.signalCode !== null) return;
      process.kill(signal);
      const timer = setTimeout(() => process.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Starts redis-server on a free port (no persistence) and waits until it answers. */
export async function startRedis(port?: number): Promise<Child & { url: string; port: number }> {
  const p = port ?? (await freePort());
  // Stopped by a kill, as a crash would be: the data is gone when it comes back.
  return { ...child(await spawnRedisServer(p), 'SIGKILL'), url: `redis://127.0.0.1:${p}`, port: p };
}

/** Options of {@link startGateway}. */
export interface GatewayOptions {
  /** The config, YAML (merged over config/default.yaml). */
  readonly config: string;
  /** Extra environment (WORKERS, LOG_LEVEL, ...). */
  readonly env?: Record<string, string>;
  /** Where its log goes (default /dev/null: written as in production, read by nobody). */
  readonly log?: string;
  /** Cores it runs on (default SERVER_CPUS). */
  readonly cpus?: string | null;
  /** Workers to wait for (server.workers), 1 by default. */
  readonly workers?: number;
  /** The entry point (default the one built with the bench, dist-bench/src/main.js). */
  readonly main?: string;
  /** With `gcOnSignal`, SIGUSR2 makes the process collect its garbage (GC_ON_SIGNAL). */
  readonly gcOnSignal?: boolean;
}

/** A full collection on SIGUSR2; last-resort also gives back the grown heap on Node 24, not 20. */
const GC_ON_SIGNAL = [
  '--expose-gc',
  '--import',
  'data:text/javascript,process.on("SIGUSR2",()=>gc({type:"major",execution:"sync",flavor:"last-resort"}))',
];

const scratch = mkdtempSync(join(tmpdir(), 'recgw-bench-'));
let configs = 0;

/** Writes `content` to a private file in the bench's temp directory and returns its path. */
export function scratchFile(name: string, content: string): string {
  const path = join(scratch, name);
  writeFileSync(path, content, { mode: 0o600 });
  return path;
}

/**
 * Starts the gateway's entry point with a config file, the DESIGN A1 environment variables and
 * the image's malloc setting; resolves once /readyz answers (and, with workers, every worker).
 */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const [port, adminPort] = [await freePort(), await freePort()];
  const configFile = scratchFile(`gateway-${++configs}.yaml`, options.config);
  const log = options.log ?? '/dev/null';
  const out = openSync(log, 'a');
  const main = options.main ?? fileURLToPath(new URL('../src/main.js', import.meta.url));
  const flags = options.gcOnSignal === true ? GC_ON_SIGNAL : [];
  const gateway = run([process.execPath, ...flags, main], options.cpus ?? SERVER_CPUS, {
    stdio: ['ignore', out, out],
    env: {
      ...process.env,
      ...RUNTIME_ENV,
      ...options.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      ADMIN_PORT: String(adminPort),
      ADMIN_HOST: '127.0.0.1',
      GATEWAY_CONFIG: configFile,
    },
  });
  closeSync(out);
  const workers = options.workers ?? 1;
  const ready = async (): Promise<boolean> => {
    if (gateway.exitCode !== null) throw new Error(`gateway exited with ${gateway.exitCode}`);
    const text = await scrape(adminPort).catch(() => '');
    return text !== '' && (workers === 1 || metricSum(text, 'recgw_workers_ready') === workers);
  };
  try {
    await waitFor(ready, 20_000, 'the gateway to be ready');
  } catch (error) {
    gateway.kill('SIGKILL');
    throw error;
  }
  return { ...child(gateway), port, adminPort };
}

/**
 * Starts reference.ts as `kind` with `arg`, on the server core, writing `input` (lines, each with its newline) to its
 * stdin; resolves with its port once it prints it.
 */
export async function startReference(
  kind: string,
  arg: string | string[] = '',
  input?: Iterable<string>,
): Promise<Server & { said: Record<string, number> }> {
  const script = fileURLToPath(new URL('reference.js', import.meta.url));
  const flags = kind === 'map' ? GC_ON_SIGNAL : [];
  const args = typeof arg === 'string' ? [arg] : arg;
  const ref = run([process.execPath, ...flags, script, kind, ...args], SERVER_CPUS, {
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'inherit'],
    env: { ...process.env, ...RUNTIME_ENV },
  });
  if (input !== undefined) Readable.from(input).pipe(ref.stdin!);
  const lines = createInterface({ input: ref.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    ref.once('exit', (code) => reject(new Error(`reference ${kind} exited with ${code}`)));
  });
  lines.close();
  ref.stdout!.resume();
  const said = JSON.parse(first) as { port: number };
  return { ...child(ref), port: said.port, said };
}

/** GETs a path of the admin listener and returns the body (throws unless 200). */
export async function scrape(adminPort: number, path = '/metrics'): Promise<string> {
  const res = await request(`http://127.0.0.1:${adminPort}${path}`, {
    headersTimeout: 5000,
    bodyTimeout: 5000,
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}`);
  return text;
}

/** Sums every sample of a metric whose labels contain `labels` (all of them when empty). */
export function metricSum(text: string, name: string, labels = ''): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (!(rest.startsWith(' ') || rest.startsWith('{')) || !rest.includes(labels)) continue;
    sum += Number(rest.slice(rest.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** Resident memory of a process, bytes (Linux /proc; NaN elsewhere). */
export function rssOf(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? Number.NaN : Number(kb) * 1024;
  } catch {
    return Number.NaN;
  }
}

/** User + system CPU time of a process so far, µs (Linux /proc, clock ticks of 10 ms; NaN elsewhere). */
export function cpuOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return Number.NaN;
  }
}
