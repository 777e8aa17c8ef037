// scripts/test-tools.mjs, the first step of `npm test`: silent when the tools are there, installs
// them through apt-get where it can, and otherwise stops at once with one line naming them.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../../../scripts/test-tools.mjs', import.meta.url));

/** A PATH directory holding node and the given executables (shell scripts). */
function binDir(dir: string, tools: Record<string, string>): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  symlinkSync(process.execPath, join(bin, 'node'));
  for (const [name, body] of Object.entries(tools)) {
    writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  }
  return bin;
}

function runScript(
  bin: string,
  env: Record<string, string> = {},
): { status: number | null; stderr: string; stdout: string; ms: number } {
  const started = Date.now();
  const run = spawnSync(join(bin, 'node'), [script], {
    env: { PATH: bin, ...env },
    encoding: 'utf8',
  });
  return { status: run.status, stderr: run.stderr, stdout: run.stdout, ms: Date.now() - started };
}

void t.test('every tool present: exit 0 and not a word', (t) => {
  const bin = binDir(t.testdir(), {
    'redis-server': 'exit 0',
    'redis-cli': 'exit 0',
    promtool: 'exit 0',
  });
  t.match(runScript(bin), { status: 0, stderr: '', stdout: '' });
  t.end();
});

void t.test(
  'a tool missing and no way to install: exit 1 within seconds, one line naming the commands and the packages',
  (t) => {
    const bin = binDir(t.testdir(), { 'redis-server': 'exit 0' });
    const run = runScript(bin);
    t.equal(run.status, 1);
    t.ok(run.ms < 5000, `${run.ms} ms`);
    const lines = run.stderr.trim().split('\n');
    t.equal(lines.length, 1, run.stderr);
    t.match(
      lines[0],
      /^npm test needs redis-cli, promtool on PATH: .*apt-get install -y --no-install-recommends redis-tools prometheus/,
    );
    t.end();
  },
);

void t.test('RECGW_TEST_INSTALL=no stops even where apt-get could install', (t) => {
  const dir = t.testdir();
  const bin = binDir(dir, { 'apt-get': `echo "$@" >> ${join(dir, 'apt.log')}` });
  const run = runScript(bin, { RECGW_TEST_INSTALL: 'no' });
  t.equal(run.status, 1);
  t.notOk(existsSync(join(dir, 'apt.log')), 'apt-get never ran');
  t.end();
});

void t.test(
  'as root with apt-get: installs the missing packages with services held off, then passes',
  { skip: process.getuid?.() !== 0 && 'needs root' },
  (t) => {
    const dir = t.testdir();
    const policy = join(dir, 'policy-rc.d');
    const log = join(dir, 'apt.log');
    // A stand-in apt-get: records its arguments and whether services were held off, and "installs"
    // the tools as stubs in the PATH directory.
    const bin = binDir(dir, {
      'apt-get':
        `echo "$* policy=$(test -x ${policy} && ${policy}; echo $?)" >> ${log}\n` +
        `case "$1" in install) node -e "for (const t of ['redis-server', 'redis-cli', 'promtool']) require('fs').writeFileSync('${join(dir, 'bin')}/' + t, '#!/bin/sh\\n', { mode: 0o755 })";; esac`,
    });
    const run = runScript(bin, { RECGW_POLICY_RC_D: policy });
    t.equal(run.status, 0, run.stderr);
    t.match(run.stderr, /installing redis-server redis-tools prometheus/);
    const calls = readFileSync(log, 'utf8').trim().split('\n');
    t.same(
      calls,
      [
        'update -qq policy=101',
        'install -y -qq --no-install-recommends redis-server redis-tools prometheus policy=101',
      ],
      'services held off during both steps',
    );
    t.notOk(existsSync(policy), 'the policy file is removed afterwards');
    t.end();
  },
);
