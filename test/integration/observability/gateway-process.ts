/**
 * Runs the real gateway process (`node dist/main.js`) for signal and start-up tests. dist/ is used
 * when it is newer than every source file (as after `npm ci`); otherwise the sources are compiled
 * once into a temporary directory keyed by their content, shared by test files and runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  copyFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
/** Ports for processes that cannot report the one they bound. */
export { freePort } from '../../helpers/free-port.js';

type Tap = { teardown(fn: () => unknown): void };

const root = fileURLToPath(new URL('../../../', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${command} ${args.join(' ')} exited ${String(code)}:\n${output}`)),
    );
  });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The path of a main.js built from the current sources. A compiled tree elsewhere still finds
 * config/default.yaml, openapi/ and node_modules through links beside it, as dist/ does in the repository.
 */
export async function builtMain(): Promise<string> {
  const sources = sourceFiles(join(root, 'src'));
  const repoMain = join(root, 'dist', 'main.js');
  if (existsSync(repoMain)) {
    const built = statSync(repoMain).mtimeMs;
    if (sources.every((file) => statSync(file).mtimeMs <= built)) return repoMain;
  }
  const hash = createHash('sha256');
  for (const file of sources) hash.update(file).update(readFileSync(file));
  hash
    .update(readFileSync(join(root, 'tsconfig.json')))
    .update(readFileSync(join(root, 'tsconfig.build.json')));
  const target = join(tmpdir(), `recgw-build-${hash.digest('hex').slice(0, 16)}`);
  const main = join(target, 'dist', 'main.js');
  const lock = `${target}.lock`;
  // One build per source version: others wait for it (a stale lock is ignored after a minute).
  for (let waited = 0; !existsSync(main); waited += 200) {
    try {
      mkdirSync(lock);
    } catch {
      if (waited < 60_000) {
        await sleep(200);
        continue;
      }
    }
    try {
      if (existsSync(main)) break;
      const work = `${target}.${process.pid}`;
      rmSync(work, { recursive: true, force: true });
      await run(process.execPath, [
        join(root, 'node_modules', 'typescript', 'bin', 'tsc'),
        '-p',
        'tsconfig.build.json',
        '--outDir',
        join(work, 'dist'),
      ]);
      copyFileSync(join(root, 'package.json'), join(work, 'package.json'));
      symlinkSync(join(root, 'node_modules'), join(work, 'node_modules'));
      symlinkSync(join(root, 'config'), join(work, 'config'));
      symlinkSync(join(root, 'openapi'), join(work, 'openapi'));
      try {
        renameSync(work, target);
      } catch {
        rmSync(work, { recursive: true, force: true });
      }
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
  return main;
}

/** How a gateway process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A gateway process under test. */
export interface GatewayProcess {
  child: ChildProcess;
  /** Everything written to stdout so far (the JSON log lines). */
  stdout(): string;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** stdout parsed as JSON lines. */
  lines(): Array<Record<string, unknown>>;
  /** Resolves when the process has exited. */
  exited: Promise<Exit>;
  /** Resolves with the first log line that `match` accepts, or rejects after `timeoutMs`. */
  waitForLine(
    match: (line: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
}

/** Starts `node main.js` with `env` (over a minimal base environment); killed in teardown if still running. */
export function spawnGateway(t: Tap, main: string, env: Record<string, string>): GatewayProcess {
  const child = spawn(process.execPath, [main], {
    cwd: root,
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<Exit>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  let done = false;
  void exited.then(() => (done = true));
  t.teardown(async () => {
    if (!done) child.kill('SIGKILL');
    await exited;
  });
  const lines = (): Array<Record<string, unknown>> =>
    out
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    lines,
    exited,
    async waitForLine(match, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        // Only complete lines: the last chunk may end mid-line.
        const found = lines().find(match);
        if (found !== undefined) return found;
        if (done)
          throw new Error(
            `gateway exited before the expected line; stdout:\n${out}\nstderr:\n${err}`,
          );
        if (Date.now() > deadline)
          throw new Error(
            `no matching log line within ${timeoutMs} ms; stdout:\n${out}\nstderr:\n${err}`,
          );
        await sleep(25);
      }
    },
  };
}

/** Starts a gateway process on free loopback ports and resolves once both listeners are up. */
export async function startGatewayProcess(
  t: Tap,
  env: Record<string, string>,
): Promise<GatewayProcess & { port: number; adminPort: number }> {
  const main = await builtMain();
  // Port 0 everywhere: the kernel picks free ports, read back from the 'listening' line.
  const gateway = spawnGateway(t, main, {
    HOST: '127.0.0.1',
    PORT: '0',
    ADMIN_HOST: '127.0.0.1',
    ADMIN_PORT: '0',
    LOG_LEVEL: 'info',
    ...env,
  });
  const listening = await gateway.waitForLine((line) => line['msg'] === 'listening', 20_000);
  const port = (listening['public'] as { port: number }).port;
  const adminPort = (listening['admin'] as { port: number }).port;
  return { ...gateway, port, adminPort };
}

/** A gateway with `server.workers: 2` on free ports, once both workers listen. */
export interface WorkersGateway {
  readonly gw: GatewayProcess;
  readonly port: number;
  readonly adminPort: number;
}

/** Starts `node main.js` with two workers, loopback ports chosen by the OS, `env` on top. */
export async function startWorkers(t: Tap, env: Record<string, string>): Promise<WorkersGateway> {
  const gw = spawnGateway(t, await builtMain(), {
    HOST: '127.0.0.1',
    PORT: '0',
    ADMIN_HOST: '127.0.0.1',
    ADMIN_PORT: '0',
    LOG_LEVEL: 'info',
    WORKERS: '2',
    ...env,
  });
  const listening = await gw.waitForLine(
    (line) => line['msg'] === 'listening' && line['workers'] === 2,
    30_000,
  );
  return {
    gw,
    port: (listening['public'] as { port: number }).port,
    adminPort: (listening['admin'] as { port: number }).port,
  };
}
