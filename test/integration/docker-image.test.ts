/**
 * The image's steps, replayed without a Docker engine: the Dockerfile's COPY and RUN lines are
 * applied to temp directories, and the result must start, serve a proxied list page, hold no dev
 * dependency, and exit 0 on SIGTERM.
 */
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { RUNTIME_ENV } from '../helpers/runtime-env.js';
import { startSimulator } from '../../src/sim/server.js';
import { freePort, stopProcess, waitFor } from '../helpers/redis.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

// A cold npm cache in CI fetches every production dependency from the registry.
t.setTimeout(300_000);

/** One Dockerfile instruction, continuation lines joined. */
interface Instruction {
  keyword: string;
  args: string;
}

/** One FROM … AS name stage. */
interface Stage {
  name: string;
  base: string;
  instructions: Instruction[];
}

/** Splits a Dockerfile into stages; the ARG defaults before the first FROM fill `${…}` in FROM. */
function parseDockerfile(text: string): Stage[] {
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim());
  const globalArgs = new Map<string, string>();
  const stages: Stage[] = [];
  for (const line of lines) {
    if (line === '' || line.startsWith('#')) continue;
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const upper = keyword.toUpperCase();
    if (upper === 'FROM') {
      const [, base = '', name = String(stages.length)] =
        /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args) ?? [];
      stages.push({
        name,
        base: base.replace(/\$\{(\w+)\}/g, (_, key: string) => globalArgs.get(key) ?? ''),
        instructions: [],
      });
    } else if (stages.length === 0 && upper === 'ARG') {
      const [key = '', value = ''] = args.split('=');
      globalArgs.set(key, value);
    } else {
      stages.at(-1)?.instructions.push({ keyword: upper, args });
    }
  }
  return stages;
}

/** A replayed stage: the directory standing for its WORKDIR, and its ENV. */
interface Built {
  dir: string;
  workdir: string;
  env: Record<string, string>;
}

/** `K=V K2=V2` of an ENV line. */
function envPairs(args: string): Record<string, string> {
  return Object.fromEntries(args.split(/\s+/).map((pair) => pair.split('=') as [string, string]));
}

/** Runs a command, resolving with its output; rejects with that output on a non-zero exit. */
async function run(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0)
    throw new Error(`${command} ${args.join(' ')} exited ${code} in ${cwd}:\n${output}`);
  return output;
}

/**
 * Runs the HEALTHCHECK's shell-form CMD as Docker does (`/bin/sh -c`, in the WORKDIR, with the
 * container's environment) and resolves with its exit code.
 */
async function healthcheck(cwd: string, env: NodeJS.ProcessEnv): Promise<number | null> {
  const command = /\bCMD\s+(.*)$/.exec(instruction('HEALTHCHECK') ?? '')?.[1];
  if (command === undefined) throw new Error('the HEALTHCHECK has no shell-form CMD');
  const child = spawn('/bin/sh', ['-c', command], { cwd, env, stdio: 'ignore' });
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
}

/** The environment of this process without tap's loader hooks, so child tools behave as in a build. */
function buildEnv(stageEnv: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => key !== 'NODE_OPTIONS' && !/^_?TAP/.test(key)),
  );
  return { ...env, ...stageEnv };
}

/**
 * Replays one stage into `dir` (its WORKDIR). COPY reads the repo, or `--from=` another stage's
 * directory; RUN runs each `&&` step with two stand-ins: the build stage's `npm ci` links the
 * repo's own node_modules (same lockfile, already installed), and `npm cache clean` is skipped
 * because here it would empty the machine's shared cache rather than trim an image layer.
 */
async function replayStage(stage: Stage, dir: string, built: Map<string, Built>): Promise<Built> {
  let workdir = '/';
  let env: Record<string, string> = {};
  // A path in an image maps into the directory that stands for that image's WORKDIR.
  const local = (path: string, base: string, baseWorkdir: string): string =>
    isAbsolute(path) ? join(base, relative(baseWorkdir, path)) : join(base, path);
  for (const { keyword, args } of stage.instructions) {
    if (keyword === 'WORKDIR') workdir = args;
    else if (keyword === 'ENV') env = { ...env, ...envPairs(args) };
    else if (keyword === 'COPY') {
      const words = args.split(/\s+/);
      const from = words.find((word) => word.startsWith('--from='))?.slice('--from='.length);
      const [dest = '', ...sources] = words.filter((word) => !word.startsWith('--')).reverse();
      const origin = from === undefined ? { dir: root, workdir: '/' } : built.get(from);
      if (origin === undefined)
        throw new Error(`COPY --from=${from}: no such stage before ${stage.name}`);
      for (const source of sources.reverse()) {
        const src = local(source, origin.dir, origin.workdir);
        const isDir = (await stat(src)).isDirectory();
        const target =
          isDir || !dest.endsWith('/')
            ? local(dest, dir, workdir)
            : join(local(dest, dir, workdir), basename(src));
        await mkdir(isDir ? target : dirname(target), { recursive: true });
        await cp(src, target, { recursive: true });
      }
    } else if (keyword === 'RUN') {
      for (const step of args.split('&&').map((part) => part.trim())) {
        if (step.startsWith('npm cache clean')) continue;
        if (step.startsWith('npm ci') && stage.name === 'build')
          await symlink(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
        else await run('sh', ['-c', step], dir, buildEnv(env));
      }
    }
  }
  const result = { dir, workdir, env };
  built.set(stage.name, result);
  return result;
}

const dockerfile = await readFile(join(root, 'Dockerfile'), 'utf8');
const stages = parseDockerfile(dockerfile);
const runtime = stages.at(-1)!;
const instruction = (keyword: string): string | undefined =>
  runtime.instructions.find((i) => i.keyword === keyword)?.args;

void t.test('the Dockerfile runs Node 24 as a non-root user with a health check', (t) => {
  t.same(
    stages.map((stage) => stage.name),
    ['build', 'runtime'],
  );
  for (const stage of stages)
    t.match(stage.base, /^node:24[.-]/, `${stage.name} stage runs on Node 24`);
  const user = instruction('USER');
  t.ok(
    user !== undefined && !['root', '0'].includes(user.split(':')[0]!),
    `runtime USER is non-root (${user})`,
  );
  t.match(instruction('HEALTHCHECK') ?? '', /CMD node -e .*\/healthz/);
  t.match(instruction('STOPSIGNAL') ?? '', 'SIGTERM');
  t.same(JSON.parse(instruction('CMD') ?? 'null'), ['node', 'dist/main.js']);
  t.same(instruction('EXPOSE')?.split(/\s+/), ['8080', '9091']);
  t.end();
});

/** Repo paths (relative to the root) that the Dockerfile's COPY steps take from the build context. */
async function copiedFromRepo(): Promise<string[]> {
  const files: string[] = [];
  for (const stage of stages) {
    for (const { keyword, args } of stage.instructions) {
      if (keyword !== 'COPY' || args.includes('--from=')) continue;
      const sources = args
        .split(/\s+/)
        .filter((word) => !word.startsWith('--'))
        .slice(0, -1);
      for (const source of sources) {
        const path = join(root, source);
        if (!(await stat(path)).isDirectory()) files.push(relative(root, path));
        else
          for (const entry of await readdir(path, { recursive: true }))
            files.push(join(relative(root, path), entry));
      }
    }
  }
  return files;
}

void t.test('no image step copies bench code', async (t) => {
  const files = await copiedFromRepo();
  t.ok(
    files.some((file) => file.startsWith('src/')),
    `the steps copy the sources (${files.length} files)`,
  );
  t.same(
    files.filter((file) => file.split('/').includes('bench') || file.startsWith('dist-bench')),
    [],
    'none of them is bench code',
  );
});

void t.test(
  'the image steps yield a gateway that serves, holds no dev dependency and stops cleanly',
  async (t) => {
    const tmp = await mkdtemp(join(tmpdir(), 'recgw-image-'));
    t.teardown(() => rm(tmp, { recursive: true, force: true }));
    const built = new Map<string, Built>();
    let image: Built | undefined;
    for (const stage of stages) image = await replayStage(stage, join(tmp, stage.name), built);
    const { dir: app, env } = image!;

    t.same(
      (await readdir(app)).sort(),
      ['config', 'dist', 'node_modules', 'openapi', 'package-lock.json', 'package.json'],
      'the image holds only what it copies and installs',
    );
    const dist = (await readdir(join(app, 'dist'), { recursive: true })).map(String);
    t.same(
      dist.filter((file) => file.split('/').includes('bench')),
      [],
      'dist/ in the image holds no bench code',
    );
    const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as Record<
      string,
      Record<string, string>
    >;
    const installed = (name: string): boolean =>
      existsSync(join(app, 'node_modules', name, 'package.json'));
    for (const name of Object.keys(pkg['dependencies'] ?? {}))
      t.ok(installed(name), `dependency ${name} is installed`);
    t.same(
      Object.keys(pkg['devDependencies'] ?? {}).filter(installed),
      [],
      'no devDependency is installed',
    );
    t.notOk(installed('typescript'), 'typescript is not in the image');
    t.notOk(installed('tap'), 'tap is not in the image');
    t.same(
      Object.fromEntries(Object.keys(RUNTIME_ENV).map((name) => [name, env[name]])),
      RUNTIME_ENV,
      'the image sets the malloc threshold the benchmark runs the gateway with',
    );

    const sim = await startSimulator();
    t.teardown(() => sim.close());
    const [port, adminPort] = [await freePort(), await freePort()];
    const [command = '', ...args] = JSON.parse(instruction('CMD')!) as string[];
    t.equal(command, 'node');
    // The image's PATH has node on it; so does this one, with the running node's directory first.
    const containerEnv = {
      PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`,
      ...env,
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      HOST: '127.0.0.1',
      UPSTREAM_URL: sim.baseUrlTemplate,
      LOG_LEVEL: 'warn',
    };
    const child: ChildProcess = spawn(process.execPath, args, {
      cwd: app,
      env: containerEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.teardown(() => stopProcess(child));
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;

    const ready = async (): Promise<boolean> => {
      if (child.exitCode !== null)
        throw new Error(`gateway exited ${child.exitCode} before ready:\n${output}`);
      const res = await request(`http://127.0.0.1:${adminPort}/readyz`).catch(() => undefined);
      await res?.body.dump();
      return res?.statusCode === 200;
    };
    await waitFor(ready, 15_000, `/readyz of the gateway on ${adminPort}`);
    t.equal(
      await healthcheck(app, containerEnv),
      0,
      'the HEALTHCHECK command passes against the running gateway',
    );

    const res = await request(`http://127.0.0.1:${port}/api/external/v2/recordings?page_size=2`, {
      headers: { host: 'acme.localhost', 'x-api-key': sim.keys['acme']![0]! },
    });
    const body = await res.body.text();
    t.equal(res.statusCode, 200, 'the proxied list page answers 200', { body });
    t.equal(
      (JSON.parse(body) as { recordings: unknown[] }).recordings.length,
      2,
      'a page of two recordings',
    );
    const openapi = await request(`http://127.0.0.1:${adminPort}/openapi.json`);
    t.equal(
      ((await openapi.body.json()) as { openapi?: string }).openapi,
      '3.1.0',
      'the image serves its OpenAPI description',
    );
    // recgw runs from the image with what it holds (the bin is dist/cli/main.js).
    const recgw = spawn(process.execPath, ['dist/cli/main.js', 'purge', 'acme'], {
      cwd: app,
      env: {
        ...containerEnv,
        ADMIN_URL: `http://127.0.0.1:${adminPort}`,
        ADMIN_TOKEN: 'not-configured',
      },
      stdio: 'ignore',
    });
    const [recgwCode] = (await once(recgw, 'exit')) as [number | null];
    t.equal(
      recgwCode,
      1,
      'recgw in the image reaches the admin API (purge refused: no token configured)',
    );

    child.kill('SIGTERM');
    const [code, signal] = await exited;
    t.equal(code, 0, 'exit code 0 after SIGTERM', { output });
    t.equal(signal, null, 'exited by itself, not killed by the signal');
    t.equal(await healthcheck(app, containerEnv), 1, 'and fails once the gateway is gone');
  },
);
