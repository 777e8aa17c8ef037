/**
 * A real Redis for tests: REDIS_URL when set, else a testcontainers Redis when a Docker engine
 * answers, else a redis-server binary on a free port. Each call gets its own key prefix, and
 * everything started here is stopped in the test's teardown.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { createConnection } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './free-port.js';

/** The part of a tap test the helpers use. */
export interface TestLike {
  teardown(fn: () => unknown): void;
}

/** A Redis to talk to, and a key prefix no other test uses. */
export interface TestRedis {
  url: string;
  keyPrefix: string;
}

/** A free TCP port on loopback (closed again before returning). */
export { freePort };

/** Sends one inline command and resolves with its raw reply (a line, or a whole bulk string), or undefined on error/timeout. */
export async function redisCommand(
  port: number,
  command: string,
  timeoutMs = 500,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let data = '';
    const done = (value: string | undefined): void => {
      socket.destroy();
      resolve(value);
    };
    socket.setTimeout(timeoutMs, () => done(undefined));
    socket.once('error', () => done(undefined));
    socket.once('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (chunk) => {
      data += chunk.toString('latin1');
      const lineEnd = data.indexOf('\r\n');
      if (lineEnd < 0) return;
      if (!data.startsWith('$')) return done(data);
      // A bulk reply: `$<length>\r\n<bytes>\r\n` (-1 for nil).
      const length = Number(data.slice(1, lineEnd));
      if (length < 0 || data.length >= lineEnd + 2 + length + 2) done(data);
    });
  });
}

/** Polls until `check` is true or `timeoutMs` passes. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}`);
    await sleep(20);
  }
}

/** Starts `redis-server` on `port` with persistence off and waits until it answers PING. */
export async function spawnRedisServer(
  port: number,
  extraArgs: string[] = [],
  cwd?: string,
): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      ...extraArgs,
    ],
    {
      stdio: 'ignore',
      ...(cwd === undefined ? {} : { cwd }),
    },
  );
  const failed = new Promise<never>((_, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}`)));
  });
  failed.catch(() => {});
  await Promise.race([
    waitFor(
      async () => (await redisCommand(port, 'PING')) === '+PONG\r\n',
      5000,
      `redis-server on ${port}`,
    ),
    failed,
  ]);
  return child;
}

/** Stops a redis-server started here and waits for it to exit. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** True when a Docker engine answers /_ping within ~1.5s. */
async function dockerAnswers(): Promise<boolean> {
  const host = process.env['DOCKER_HOST'];
  const socketPath = host?.startsWith('unix://')
    ? host.slice('unix://'.length)
    : host === undefined
      ? '/var/run/docker.sock'
      : undefined;
  if (socketPath !== undefined && !existsSync(socketPath)) return false;
  const target =
    socketPath !== undefined
      ? { socketPath }
      : (() => {
          const url = new URL(host!.replace(/^tcp:/, 'http:'));
          return { host: url.hostname, port: Number(url.port || 2375) };
        })();
  return new Promise((resolve) => {
    const req = request({ ...target, path: '/_ping', timeout: 1500 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(false));
    req.end();
  });
}

async function containerRedis(t: TestLike): Promise<string> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const container = await new GenericContainer('redis:7-alpine')
    .withExposedPorts(6379)
    .withWaitStrategy(Wait.forLogMessage('Ready to accept connections'))
    .start();
  t.teardown(() => container.stop());
  return `redis://${container.getHost()}:${container.getMappedPort(6379)}`;
}

async function binaryRedis(t: TestLike): Promise<string | undefined> {
  const port = await freePort();
  let child: ChildProcess;
  try {
    child = await spawnRedisServer(port);
  } catch {
    return undefined;
  }
  t.teardown(() => stopProcess(child));
  return `redis://127.0.0.1:${port}`;
}

function uniquePrefix(): string {
  return `test-${randomBytes(6).toString('hex')}`;
}

/** A Redis for this test: REDIS_URL, else testcontainers, else a redis-server binary; fails naming all three. */
export async function getRedis(t: TestLike): Promise<TestRedis> {
  const fromEnv = process.env['REDIS_URL'];
  if (fromEnv) return { url: fromEnv, keyPrefix: uniquePrefix() };
  if (await dockerAnswers()) return { url: await containerRedis(t), keyPrefix: uniquePrefix() };
  const url = await binaryRedis(t);
  if (url !== undefined) return { url, keyPrefix: uniquePrefix() };
  throw new Error(
    'no Redis for tests: REDIS_URL is not set, no Docker engine answered for testcontainers, and no redis-server binary could be started',
  );
}

/** A redis-server of this test's own that it may stop and start again on the same port. */
export interface PrivateRedis {
  url: string;
  port: number;
  keyPrefix: string;
  /** Kills the server (as a crash would); its data is gone. */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  /** Freezes the server (SIGSTOP): connections stay open but nothing answers, like a stalled Redis. */
  pause(): void;
  /** Lets a paused server run again (SIGCONT). */
  resume(): void;
}

/** Starts a private redis-server (FLUSHALL is safe on it); killed in teardown. */
export async function startPrivateRedis(t: TestLike): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined = await spawnRedisServer(port);
  t.teardown(async () => {
    if (child) await stopProcess(child);
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    keyPrefix: uniquePrefix(),
    async stop() {
      if (child) await stopProcess(child);
      child = undefined;
    },
    async start() {
      if (!child) child = await spawnRedisServer(port);
    },
    pause() {
      child?.kill('SIGSTOP');
    },
    resume() {
      child?.kill('SIGCONT');
    },
  };
}
