/**
 * Starts a bench process pinned to one CPU (`taskset -c <cpu> node <script>`) and talks to it
 * over the IPC channel: one request, one reply, matched by id. Pinning keeps the server under
 * test and the load generator off each other's core, so req/s ratios compare like with like.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A message from a bench child: a reply to request `id`, either a result or an error text. */
export interface ChildReply {
  readonly id: number;
  readonly result?: unknown;
  readonly error?: string;
}

/** A running pinned child. */
export interface PinnedChild {
  readonly pid: number;
  /** Sends a command and resolves with the child's result (rejects with its error). */
  call<T>(command: string, args?: unknown): Promise<T>;
  /** Stops the child (SIGTERM, then SIGKILL after 3 s) and resolves once it has exited. */
  stop(): Promise<void>;
}

/**
 * The malloc setting the production image runs with (Dockerfile ENV): allocations of 128 KiB and
 * up, L1's arena segments among them, always get their own mapping, so a freed segment goes back
 * to the system. Without it glibc raises that threshold after the first free and serves later
 * segments from its heap, whose holes it keeps.
 */
export const RUNTIME_ENV: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: '131072' };

/** Whether `taskset` exists here; without it children run unpinned (and the report says so). */
export const canPin = existsSync('/usr/bin/taskset') || existsSync('/bin/taskset');

/** How a child is started besides its script and CPU. */
export interface StartOptions {
  /** Extra node flags (e.g. `--cpu-prof`). */
  readonly nodeFlags?: readonly string[];
  /**
   * The child's stdout to /dev/null: a gateway then logs exactly as in production (buffered
   * asynchronous stdout) without the bench printing its lines.
   */
  readonly stdoutToNull?: boolean;
  /** A command node runs under (valgrind and its options, for the instruction counts); its pid is the child's. */
  readonly wrapper?: readonly string[];
}

/** Starts `dist-bench/bench/<script>` on `cpu`. */
export function startPinned(
  script: string,
  cpu: number,
  { nodeFlags = [], stdoutToNull = false, wrapper = [] }: StartOptions = {},
): Promise<PinnedChild> {
  const path = fileURLToPath(new URL(script, import.meta.url));
  const command = [...wrapper, process.execPath, ...nodeFlags, path];
  const stdio = ['ignore', stdoutToNull ? 'ignore' : 'inherit', 'inherit', 'ipc'] as const;
  const options = { stdio: [...stdio], env: { ...process.env, ...RUNTIME_ENV } };
  // taskset execs its command, so the pid is node's (or the wrapper's, which runs node itself).
  const child: ChildProcess = canPin
    ? spawn('taskset', ['-c', String(cpu), ...command], options)
    : spawn(command[0]!, command.slice(1), options);
  const pending = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();
  let nextId = 1;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.on('message', (message: ChildReply) => {
    const waiter = pending.get(message.id);
    if (waiter === undefined) return;
    pending.delete(message.id);
    if (message.error !== undefined) waiter.reject(new Error(`${script}: ${message.error}`));
    else waiter.resolve(message.result);
  });
  void exited.then(() => {
    for (const waiter of pending.values()) waiter.reject(new Error(`${script} exited`));
    pending.clear();
  });
  const handle: PinnedChild = {
    pid: child.pid ?? -1,
    call<T>(command: string, args?: unknown): Promise<T> {
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
        child.send({ id, command, args });
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
  // The child says 'ready' (id 0) once its handlers are installed.
  return new Promise((resolve, reject) => {
    const onReady = (message: ChildReply): void => {
      if (message.id !== 0) return;
      child.off('message', onReady);
      resolve(handle);
    };
    child.on('message', onReady);
    child.once('error', reject);
    void exited.then(() => reject(new Error(`${script} exited before it was ready`)));
  });
}

/** User + system CPU time of this process so far, µs: the children's `cpu` probe. */
export function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** Child side: answers commands with `handlers` until SIGTERM or the parent goes away. */
export function serveCommands(
  handlers: Record<string, (args: never) => unknown>,
  onStop: () => Promise<void> = async () => {},
): void {
  const stop = (): void => {
    void onStop().finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('disconnect', stop);
  process.on('message', (message: { id: number; command: string; args: never }) => {
    const handler = handlers[message.command];
    const reply = (body: Omit<ChildReply, 'id'>): void => {
      process.send?.({ id: message.id, ...body });
    };
    if (handler === undefined) return reply({ error: `unknown command ${message.command}` });
    Promise.resolve()
      .then(() => handler(message.args))
      .then(
        (result) => reply({ result }),
        (error: unknown) =>
          reply({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
      );
  });
  process.send?.({ id: 0 });
}
