#!/usr/bin/env node
// First step of `npm test`: the suite needs redis-server and redis-cli (real Redis and Redis Cluster
// tests) and promtool (alert rules, Prometheus config). When one is missing, install it from
// Debian packages where this machine can (apt-get, as root or through passwordless sudo), or stop
// at once with one line naming what to install. RECGW_TEST_INSTALL=no never installs.
// Plain JavaScript so it runs before anything is compiled.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, writeFileSync, chmodSync, rmSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import process from 'node:process';

/** Each command the tests run, and the Debian package that ships it. */
const TOOLS = [
  { command: 'redis-server', debian: 'redis-server' },
  { command: 'redis-cli', debian: 'redis-tools' },
  { command: 'promtool', debian: 'prometheus' },
];
// Where Debian's invoke-rc.d looks; a test points it elsewhere.
const POLICY = process.env.RECGW_POLICY_RC_D ?? '/usr/sbin/policy-rc.d';

function onPath(command) {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

const missing = () => TOOLS.filter((tool) => !onPath(tool.command));

/** How to run a command as root here: directly, through sudo without a password, or not at all. */
function rootRunner() {
  if (process.getuid?.() === 0) return [];
  if (onPath('sudo') && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0)
    return ['sudo', '-n'];
  return null;
}

function asRoot(runner, args) {
  const [command, ...rest] = [...runner, ...args];
  return (
    spawnSync(command, rest, {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    }).status === 0
  );
}

function fail(tools) {
  const commands = tools.map((tool) => tool.command).join(', ');
  const packages = tools.map((tool) => tool.debian).join(' ');
  process.stderr.write(
    `npm test needs ${commands} on PATH: install them (Debian/Ubuntu: sudo apt-get install -y --no-install-recommends ${packages}; ` +
      'macOS: brew install redis prometheus) and run npm test again\n',
  );
  process.exit(1);
}

function install(runner, tools) {
  const packages = tools.map((tool) => tool.debian);
  process.stderr.write(
    `npm test: installing ${packages.join(' ')} from Debian packages (needed by the tests; RECGW_TEST_INSTALL=no to stop instead)\n`,
  );
  // policy-rc.d answering 101 keeps the packages from starting services: the tests start their own
  // redis-server on free ports, and a Prometheus server left on :9090 would outlive the run.
  let addedPolicy = false;
  if (!existsSync(POLICY)) {
    if (runner.length === 0) {
      writeFileSync(POLICY, '#!/bin/sh\nexit 101\n');
      chmodSync(POLICY, 0o755);
    } else {
      asRoot(runner, [
        'sh',
        '-c',
        `printf '#!/bin/sh\\nexit 101\\n' > ${POLICY} && chmod 755 ${POLICY}`,
      ]);
    }
    addedPolicy = true;
  }
  try {
    if (asRoot(runner, ['apt-get', 'update', '-qq']))
      asRoot(runner, ['apt-get', 'install', '-y', '-qq', '--no-install-recommends', ...packages]);
  } finally {
    if (addedPolicy) {
      if (runner.length === 0) rmSync(POLICY, { force: true });
      else asRoot(runner, ['rm', '-f', POLICY]);
    }
  }
}

const needed = missing();
if (needed.length > 0) {
  const runner =
    process.env.RECGW_TEST_INSTALL === 'no' || process.platform !== 'linux' || !onPath('apt-get')
      ? null
      : rootRunner();
  if (runner === null) fail(needed);
  install(runner, needed);
  const still = missing();
  if (still.length > 0) fail(still);
}
