/**
 * Starts what the cases measure: simulators and Redis on the load generator's core (CPU 0),
 * gateways and ceilings on the server core (CPU 1), and stops all of them at the end.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SimulatorOptions } from '../src/sim/server.js';
import type { RecordedAnswer } from './ceiling-process.js';
import type { BenchSettings } from './context.js';
import type { GatewayStats } from './gateway-process.js';
import { startPinned, type PinnedChild, type StartOptions } from './pinned-child.js';
import { startRedis, type PrivateRedis } from './redis-server.js';
import type { SimInfo } from './sim-process.js';

/** The load generator's core; simulators and Redis share it. */
export const LOAD_CPU = 0;
/** The server-under-test's core. */
export const SERVER_CPU = 1;

/** A gateway child. */
export interface GatewayHandle {
  port: number;
  /** The child's pid (valgrind's, when it runs under one: callgrind_control talks to it). */
  pid: number;
  stats: () => Promise<GatewayStats>;
  /** CPU time of the process so far, µs. */
  cpu: () => Promise<number>;
}

/** A ceiling or Fastify child: its port and its CPU time so far (µs). */
export interface ReferenceHandle {
  port: number;
  pid: number;
  cpu: () => Promise<number>;
}

/** A simulator child. */
export interface SimHandle extends SimInfo {
  /** The simulator's own port (for calling it directly). */
  port: number;
  latency: (ms: number) => Promise<void>;
  total: () => Promise<number>;
}

/** Anything the harness stops: a pinned child, or a process a case started itself. */
interface Stoppable {
  stop(): Promise<void>;
}

/** A server child's optional wrapper command (callgrind, for the instruction counts). */
type Wrapped = Pick<StartOptions, 'wrapper'>;

/** Owns every process the bench starts. */
export class Harness {
  /** Gateways, ceilings, memory children and adopted processes: stopped after each case or round. */
  private readonly servers: Stoppable[] = [];
  /** Simulators: kept for the whole run. */
  private readonly support: PinnedChild[] = [];
  private redis: PrivateRedis | undefined;
  private readonly secrets = mkdtempSync(join(tmpdir(), 'recgw-bench-'));
  private gateways = 0;
  /** Ceilings and Fastify children started, numbering their profiles. */
  private references = 0;

  constructor(readonly settings: BenchSettings) {}

  /** Starts a simulator child. */
  async sim(options: SimulatorOptions): Promise<SimHandle> {
    const child = await this.own(startPinned('sim-process.js', LOAD_CPU), this.support);
    const info = await child.call<SimInfo>('start', options);
    return {
      ...info,
      port: Number(new URL(info.origin).port),
      latency: async (ms) => {
        await child.call('latency', ms);
      },
      total: () => child.call<number>('total'),
    };
  }

  /** The base config every gateway gets: the simulator upstream, loopback listeners, info logs. */
  base(sim: SimHandle): Record<string, unknown> {
    return {
      server: { port: 0, host: '127.0.0.1' },
      admin: { port: 0 },
      upstream: { baseUrl: sim.baseUrlTemplate },
      log: { level: 'info' },
    };
  }

  /** Starts a gateway child with a full config (see {@link base}), under `wrapper` if given. */
  async gateway(
    config: Record<string, unknown>,
    { wrapper = [] }: Wrapped = {},
  ): Promise<GatewayHandle> {
    const child = await this.own(
      startPinned('gateway-process.js', SERVER_CPU, {
        nodeFlags: this.profileFlags(`gateway-${++this.gateways}`),
        stdoutToNull: true,
        wrapper,
      }),
    );
    const { port } = await child.call<{ port: number }>('start', config);
    const stats = (): Promise<GatewayStats> => child.call<GatewayStats>('stats');
    return { port, pid: child.pid, stats, cpu: async () => (await stats()).cpuMicros };
  }

  /** Starts a ceiling child replaying recorded answers (with `busyMicros` of CPU spent per request, a reference). */
  async ceiling(
    answers: RecordedAnswer[],
    { busyMicros = 0, wrapper = [] }: Wrapped & { busyMicros?: number } = {},
  ): Promise<ReferenceHandle> {
    // Profiled like the gateways, so a profile's difference from the ceiling's is the gateway's own work.
    const child = await this.own(
      startPinned('ceiling-process.js', SERVER_CPU, {
        nodeFlags: this.profileFlags(`ceiling-${++this.references}`),
        wrapper,
      }),
    );
    const { port } = await child.call<{ port: number }>('start', { answers, busyMicros });
    return { port, pid: child.pid, cpu: () => child.call<number>('cpu') };
  }

  /** Starts the Fastify + lru-cache reference replaying recorded answers (with `logger`, logging requests to /dev/null). */
  async fastify(
    answers: RecordedAnswer[],
    { logger = false, wrapper = [] }: Wrapped & { logger?: boolean } = {},
  ): Promise<ReferenceHandle> {
    const child = await this.own(
      startPinned('fastify-process.js', SERVER_CPU, {
        nodeFlags: this.profileFlags(`fastify-${++this.references}`),
        stdoutToNull: logger,
        wrapper,
      }),
    );
    const { port } = await child.call<{ port: number }>('start', { answers, logger });
    return { port, pid: child.pid, cpu: () => child.call<number>('cpu') };
  }

  /** Starts the memory child (with --expose-gc). */
  memoryChild(): Promise<PinnedChild> {
    return this.own(startPinned('memory-process.js', SERVER_CPU, { nodeFlags: ['--expose-gc'] }));
  }

  /** The private Redis (started on first use). */
  async redisUrl(): Promise<string> {
    this.redis ??= await startRedis(LOAD_CPU);
    return this.redis.url;
  }

  /** Writes a secret to a 0600 file in a private temp dir and returns its path. */
  secretFile(name: string, content: string): string {
    const path = join(this.secrets, name);
    writeFileSync(path, content, { mode: 0o600 });
    return path;
  }

  /**
   * Makes `server`, a process a case started itself (the workers case's `main.js`), one of the
   * servers the next `release` stops.
   */
  adopt<T extends Stoppable>(server: T): T {
    this.servers.push(server);
    return server;
  }

  /** Stops the gateways and ceilings of the case just run (frees the server core and memory). */
  async release(): Promise<void> {
    await Promise.all(this.servers.splice(0).map((child) => child.stop()));
  }

  /** Stops everything. */
  async close(): Promise<void> {
    await this.release();
    await Promise.all(this.support.splice(0).map((child) => child.stop()));
    await this.redis?.stop();
  }

  /** With BENCH_CPU_PROF: node flags writing a CPU profile named `name` there. */
  private profileFlags(name: string): string[] {
    return this.settings.cpuProfDir === null
      ? []
      : [
          '--cpu-prof',
          `--cpu-prof-dir=${this.settings.cpuProfDir}`,
          `--cpu-prof-name=${name}.cpuprofile`,
        ];
  }

  private async own(
    started: Promise<PinnedChild>,
    list: Stoppable[] = this.servers,
  ): Promise<PinnedChild> {
    const child = await started;
    list.push(child);
    return child;
  }
}
