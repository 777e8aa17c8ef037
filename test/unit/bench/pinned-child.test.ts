// Starting a bench child: pinned to its CPU, node's flags and the wrapper command in place, the
// handle's pid the one node runs as (callgrind_control addresses the child by it), commands
// answered by id, and stop() leaving no process behind.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { canPin, RUNTIME_ENV, startPinned } from '../../../bench/pinned-child.js';

/**
 * A child that speaks the bench protocol in plain JavaScript (tap's TypeScript loader does not
 * reach a spawned node): ready as id 0, then `whoami` answers what the child sees of itself.
 */
const CHILD = `
process.on('message', ({ id, command }) => {
  if (command !== 'whoami') return process.send({ id, error: 'unknown command ' + command });
  const { readFileSync } = require('node:fs');
  const allowed = /Cpus_allowed_list:\\s*(\\S+)/.exec(readFileSync('/proc/self/status', 'utf8'));
  process.send({
    id,
    result: {
      pid: process.pid,
      execArgv: process.execArgv,
      wrapped: process.env.RECGW_WRAPPED ?? null,
      malloc: process.env.MALLOC_MMAP_THRESHOLD_ ?? null,
      cpus: allowed ? allowed[1] : null,
    },
  });
});
process.on('SIGTERM', () => process.exit(0));
process.send({ id: 0 });
`;

interface WhoAmI {
  pid: number;
  execArgv: string[];
  wrapped: string | null;
  malloc: string | null;
  cpus: string | null;
}

/** Whether process `pid` still exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

void t.test('a child started under a wrapper, with node flags, on one CPU', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'recgw-pinned-child-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // .cjs: the child uses require, whatever the package's module type.
  const script = join(dir, 'child.cjs');
  writeFileSync(script, CHILD);

  const child = await startPinned(script, 0, {
    nodeFlags: ['--max-old-space-size=64'],
    // env runs node in its own place (exec), as valgrind runs it under its own pid.
    wrapper: ['env', 'RECGW_WRAPPED=yes'],
  });
  t.teardown(() => child.stop());
  const me = await child.call<WhoAmI>('whoami');
  t.equal(me.wrapped, 'yes', 'node ran under the wrapper command');
  t.same(me.execArgv, ['--max-old-space-size=64'], 'the node flags, and only them');
  t.equal(
    me.malloc,
    RUNTIME_ENV['MALLOC_MMAP_THRESHOLD_'],
    "the production image's malloc setting",
  );
  t.equal(me.pid, child.pid, "the handle's pid is the process node runs as");
  if (canPin) t.equal(me.cpus, '0', 'pinned to the CPU asked for');
  await t.rejects(child.call('nonsense'), /unknown command nonsense/, 'an error comes back as one');

  await child.stop();
  t.notOk(alive(me.pid), 'stop() resolves once the child is gone');
  await child.stop();
  t.pass('a second stop() is harmless');
});

void t.test('a child that exits before it is ready rejects the start', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'recgw-pinned-child-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const script = join(dir, 'crash.cjs');
  writeFileSync(script, 'process.exit(3);\n');
  await t.rejects(startPinned(script, 0), /exited before it was ready/);
});
