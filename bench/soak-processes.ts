/**
 * The processes of the soak run: the gateway as `node dist/main.js` in a child of its own (so the
 * RSS measured is the gateway's alone), an optional private redis-server, and /metrics scraping.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { freePort } from './free-port.js';
import { RUNTIME_ENV } from './pinned-child.js';

/** A child process the soak run started and must stop. */
export interface Child {
  readonly process: ChildProcess;
  /** SIGTERM (SIGKILL after 5 s for the gateway; at once for redis), resolving once it has exited. */
  stop(): Promise<void>;
}

export { freePort };

async function until(
  check: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

function stopper(
  child: ChildProcess,
  signal: NodeJS.Signals,
  killAfterMs: number,
): () => Promise<void> {
  return async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    await exited;
    clearTimeout(timer);
  };
}

/** Whether a redis-server binary can be run here. */
export function hasRedisServer(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** Starts redis-server on `port` (no persistence) and waits until it answers PING. */
export async function startRedis(port: number): Promise<Child> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  await until(() => ping(port), 5000, `redis-server on ${port}`);
  // A kill, as a crash would be: the data is gone when it comes back.
  return { process: child, stop: stopper(child, 'SIGKILL', 0) };
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.setTimeout(300, () => socket.destroy());
    socket.once('error', () => resolve(false));
    socket.once('close', () => resolve(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      resolve(data.toString().startsWith('+PONG'));
      socket.destroy();
    });
  });
}

/** Where the gateway listens. */
export interface GatewayPorts {
  readonly port: number;
  readonly adminPort: number;
}

/**
 * Starts `node dist/main.js` with a config file written to `dir` (merged over default.yaml),
 * the DESIGN A1 environment variables and the image's malloc setting (RUNTIME_ENV); its log
 * goes to `dir/gateway.log`. `nodeFlags` (e.g.
 * `--cpu-prof`) go before the script.
 */
export async function startGateway(
  dir: string,
  config: string,
  env: Record<string, string>,
  nodeFlags: readonly string[] = [],
): Promise<Child & GatewayPorts & { log: string }> {
  const [port, adminPort] = [await freePort(), await freePort()];
  const configFile = join(dir, 'gateway.yaml');
  writeFileSync(configFile, config);
  const log = join(dir, 'gateway.log');
  const out = openSync(log, 'a');
  // The production build (npm run build), as the image runs it; this file runs from dist-bench/bench/.
  const main = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
  const child = spawn(process.execPath, [...nodeFlags, main], {
    stdio: ['ignore', out, out],
    env: {
      ...process.env,
      ...RUNTIME_ENV,
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      ADMIN_PORT: String(adminPort),
      ADMIN_HOST: '127.0.0.1',
      GATEWAY_CONFIG: configFile,
    },
  });
  closeSync(out);
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`gateway exited with ${code}; see ${log}`))),
  );
  exited.catch(() => undefined);
  await Promise.race([
    until(
      async () => (await scrape(adminPort, '/readyz').catch(() => '')) !== '',
      10_000,
      'the gateway to be ready',
    ),
    exited,
  ]);
  return { process: child, stop: stopper(child, 'SIGTERM', 5000), port, adminPort, log };
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

/** Every sample of a metric as label text → value. */
export function metricSeries(text: string, name: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const close = line.lastIndexOf('}');
    out[line.slice(name.length + 1, close)] = Number(line.slice(close + 2));
  }
  return out;
}
