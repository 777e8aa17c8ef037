// The README's commands as a user runs them: `npm start` stops on SIGTERM sent to npm (no orphaned
// gateway), and `npm run demo` shows each request's log line while it runs, not at Ctrl-C.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { request } from 'undici';
import { builtMain, freePort } from './gateway-process.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts a command, collecting stdout; killed in teardown if still running. */
function run(
  t: { teardown(fn: () => unknown): void },
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
) {
  const child: ChildProcess = spawn(command, args, {
    cwd,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr!.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  let done = false;
  void exited.then(() => (done = true));
  t.teardown(async () => {
    if (!done) child.kill('SIGKILL');
    await exited;
  });
  const waitFor = async (pattern: RegExp, timeoutMs = 20_000): Promise<RegExpExecArray> => {
    for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(25)) {
      const match = pattern.exec(out);
      if (match !== null) return match;
    }
    throw new Error(`no ${String(pattern)} within ${timeoutMs} ms in:\n${out}`);
  };
  return { child, exited, waitFor, out: () => out };
}

async function refuses(port: number): Promise<boolean> {
  try {
    const res = await request(`http://127.0.0.1:${port}/healthz`);
    await res.body.dump();
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ECONNREFUSED';
  }
}

void t.test('npm start: SIGTERM to npm reaches the gateway, which drains and exits', async (t) => {
  // The package the built main.js belongs to (the repository, or a build of the current sources).
  const pkg = dirname(dirname(await builtMain()));
  const [port, adminPort] = [await freePort(), await freePort()];
  const npm = run(t, 'npm', ['start', '--silent'], pkg, {
    PORT: String(port),
    ADMIN_PORT: String(adminPort),
    HOST: '127.0.0.1',
  });
  await npm.waitFor(/"msg":"listening"/);
  npm.child.kill('SIGTERM');
  await npm.waitFor(/"signal":"SIGTERM".*"msg":"shutting down"/, 5000);
  const exit = await npm.exited;
  t.equal(exit.code, 0, 'npm exits 0 once the gateway has');
  t.ok(await refuses(adminPort), 'nothing left listening: the gateway exited with npm');
});

void t.test('npm run demo: request log lines appear while the demo runs', async (t) => {
  const demo = join(dirname(await builtMain()), 'sim', 'demo.js');
  const [port, adminPort] = [await freePort(), await freePort()];
  const proc = run(t, process.execPath, [demo], process.cwd(), {
    PORT: String(port),
    ADMIN_PORT: String(adminPort),
  });
  const [, key] = await proc.waitFor(/X-Api-Key: ([^']+)' '[^']*\/recordings\?page_size=5'/);
  const res = await request(`http://127.0.0.1:${port}/api/external/v2/recordings?page_size=5`, {
    headers: { host: 'acme.localhost', 'x-api-key': key! },
  });
  t.equal(res.statusCode, 200);
  await res.body.dump();
  await proc.waitFor(/"msg":"request"/, 1000);
  t.pass('the request line was written within a second, with the demo still running');
  proc.child.kill('SIGINT');
  t.equal((await proc.exited).code, 0);
});
