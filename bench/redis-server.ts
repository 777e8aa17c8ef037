/** A private redis-server for the L2 cases: a free loopback port, no persistence, stopped at the end. */
import { spawn } from 'node:child_process';
import { createConnection } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './free-port.js';

/** A running private Redis. */
export interface PrivateRedis {
  url: string;
  stop(): Promise<void>;
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.setTimeout(300, () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once(
      'data',
      (chunk) => (socket.destroy(), resolve(chunk.toString('latin1').startsWith('+PONG'))),
    );
  });
}

/** Starts `redis-server` pinned to `cpu` (the load generator's core, so it is not counted as the gateway's). */
export async function startRedis(cpu: number): Promise<PrivateRedis> {
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const child = spawn('taskset', ['-c', String(cpu), 'redis-server', ...args], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 5000;
  while (!(await ping(port))) {
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error('redis-server did not start (is it installed?)');
    await sleep(50);
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
