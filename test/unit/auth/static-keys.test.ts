// auth.mode static (DESIGN A6): the key file's rules, and its reload on change without restarts.
import t from 'tap';
import { mkdtempSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { hashKey } from '../../../src/auth/key-hash.js';
import { parseKeyFile, StaticKeys } from '../../../src/auth/static-keys.js';
import { asWorkspaceId, type WorkspaceId } from '../../../src/brands.js';
import { createLogger } from '../../../src/observability/logger.js';
import { captureLogs } from '../../helpers/capture-logs.js';
import { FakeClock } from '../../helpers/fake-clock.js';

const acme = asWorkspaceId('acme') as WorkspaceId;
const globex = asWorkspaceId('globex') as WorkspaceId;

/** A temporary key file (removed in teardown) and a writer that also moves its mtime on. */
function keyFile(
  t: Test,
  table: Record<string, unknown>,
): { path: string; write(text: string): void } {
  const dir = mkdtempSync(join(tmpdir(), 'recgw-keys-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'keys.json');
  let version = 0;
  const write = (text: string): void => {
    writeFileSync(path, text);
    // Coarse file systems may keep the mtime within one tick; an editor's save always moves it.
    version += 1;
    const at = new Date(Date.UTC(2030, 0, 1) + version * 1000);
    utimesSync(path, at, at);
  };
  write(JSON.stringify(table));
  return { path, write };
}

function failure(text: string): string {
  try {
    parseKeyFile(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`accepted ${text}`);
}

void t.test('parseKeyFile: hashes per workspace, compared in lower case', (t) => {
  const upper = hashKey('k1').toUpperCase();
  const table = parseKeyFile(JSON.stringify({ acme: [upper, hashKey('k2')], globex: [] }));
  t.same([...table.keys()], ['acme', 'globex']);
  t.ok(table.get('acme')?.has(hashKey('k1')), 'an upper-case hash in the file matches');
  t.ok(table.get('acme')?.has(hashKey('k2')));
  t.equal(table.get('globex')?.size, 0, 'a workspace may list no keys');
  t.end();
});

void t.test(
  'parseKeyFile: every malformed file is refused with a message naming the problem',
  (t) => {
    t.match(failure('not json'), /JSON/i, 'not JSON');
    t.match(failure(''), /JSON/i, 'empty file');
    t.equal(failure('[]'), 'key file must be a JSON object');
    t.equal(failure('null'), 'key file must be a JSON object');
    t.equal(failure('"acme"'), 'key file must be a JSON object');
    t.match(failure('{"acme": "abc"}'), /acme must be an array/);
    t.match(failure('{"acme": {"k": 1}}'), /acme must be an array/);
    t.match(
      failure('{"acme": ["abc"]}'),
      /acme has an entry that is not a hex SHA-256/,
      'too short',
    );
    t.match(failure(`{"acme": ["${hashKey('x')}0"]}`), /acme has an entry/, 'too long');
    t.match(failure(`{"acme": ["${'g'.repeat(64)}"]}`), /acme has an entry/, 'not hex');
    t.match(failure('{"acme": [42]}'), /acme has an entry/, 'not a string');
    t.match(failure(`{"acme": [" ${hashKey('x')}"]}`), /acme has an entry/, 'padded');
    t.match(
      failure(`{"ACME": ["${hashKey('x')}"]}`),
      /ACME is not a workspace name/,
      'upper case can never match a Host',
    );
    t.match(failure(`{"a.b": ["${hashKey('x')}"]}`), /a\.b is not a workspace name/);
    const message = failure(`{"acme": ["sim-acme-key-1"]}`);
    t.notMatch(message, /sim-acme-key-1/, 'a raw key put in the file by mistake is not echoed');
    t.end();
  },
);

void t.test('StaticKeys: keys are per workspace', (t) => {
  const logs = captureLogs();
  const file = keyFile(t, { acme: [hashKey('acme-key')], globex: [hashKey('globex-key')] });
  const keys = new StaticKeys(
    file.path,
    createLogger({ level: 'info', destination: logs.stream }),
    () => 0,
  );
  t.equal(keys.has(acme, hashKey('acme-key')), true);
  t.equal(
    keys.has(globex, hashKey('acme-key')),
    false,
    'a key listed for acme is not valid for globex',
  );
  t.equal(
    keys.has(asWorkspaceId('initech') as WorkspaceId, hashKey('acme-key')),
    false,
    'an unlisted workspace has no keys',
  );
  t.equal(keys.has(acme, hashKey('other')), false);
  t.end();
});

void t.test('StaticKeys: a missing or broken file at start-up throws', (t) => {
  const logger = createLogger({ level: 'silent' });
  t.throws(() => new StaticKeys('/nonexistent/keys.json', logger, () => 0), /ENOENT/);
  const file = keyFile(t, {});
  file.write('{"acme": "oops"}');
  t.throws(() => new StaticKeys(file.path, logger, () => 0), /acme must be an array/);
  t.end();
});

void t.test('StaticKeys: a rewrite is picked up at most once a second, and announced', (t) => {
  const clock = new FakeClock();
  const logs = captureLogs();
  const file = keyFile(t, { acme: [hashKey('old')] });
  const reloads = (): number =>
    logs.lines().filter((line) => line['msg'] === 'key file reloaded').length;
  const keys = new StaticKeys(
    file.path,
    createLogger({ level: 'info', destination: logs.stream }),
    () => clock.now(),
  );
  t.equal(keys.has(acme, hashKey('old')), true);
  t.equal(reloads(), 0, 'an unchanged file is not reloaded');

  file.write(JSON.stringify({ acme: [hashKey('new')] }));
  clock.advance(500);
  t.equal(
    keys.has(acme, hashKey('old')),
    true,
    'within the second since the last check the old table stands',
  );
  clock.advance(500);
  t.equal(
    keys.has(acme, hashKey('old')),
    false,
    'a removed key stops working once the second is up',
  );
  t.equal(keys.has(acme, hashKey('new')), true, 'an added key works');
  t.equal(reloads(), 1, 'the reload is logged once');

  // Editors and config managers often write a new file and rename it over the old one.
  const next = `${file.path}.tmp`;
  writeFileSync(next, JSON.stringify({ globex: [hashKey('new')] }));
  utimesSync(next, new Date(Date.UTC(2031, 0, 1)), new Date(Date.UTC(2031, 0, 1)));
  renameSync(next, file.path);
  clock.advance(1000);
  t.equal(keys.has(acme, hashKey('new')), false, 'an atomic replace is seen too');
  t.equal(keys.has(globex, hashKey('new')), true);
  t.equal(reloads(), 2);
  t.notOk(
    logs.text().includes(hashKey('old')) || logs.text().includes(hashKey('new')),
    'no key material in the log',
  );
  t.end();
});

void t.test('StaticKeys: a broken rewrite keeps the previous keys and logs an error', (t) => {
  const clock = new FakeClock();
  const logs = captureLogs();
  const file = keyFile(t, { acme: [hashKey('kept')] });
  const reloads = (): number =>
    logs.lines().filter((line) => line['msg'] === 'key file reloaded').length;
  const keys = new StaticKeys(
    file.path,
    createLogger({ level: 'info', destination: logs.stream }),
    () => clock.now(),
  );
  for (const broken of ['{"acme": [', '{"acme": ["nothex"]}', '[]']) {
    file.write(broken);
    clock.advance(1000);
    t.equal(keys.has(acme, hashKey('kept')), true, `still valid after ${broken}`);
  }
  rmSync(file.path);
  clock.advance(1000);
  t.equal(keys.has(acme, hashKey('kept')), true, 'a deleted file keeps the previous keys too');
  t.equal(reloads(), 0, 'nothing was reloaded');
  const errors = logs.lines().filter((line) => line['level'] === 50);
  t.equal(errors.length, 4, 'one error line per failed attempt');
  t.ok(
    errors.every(
      (line) =>
        line['msg'] === 'key file reload failed; keeping the previous keys' &&
        line['file'] === file.path,
    ),
  );

  file.write(JSON.stringify({ acme: [hashKey('fixed')] }));
  clock.advance(1000);
  t.equal(keys.has(acme, hashKey('fixed')), true, 'the repaired file is loaded');
  t.equal(keys.has(acme, hashKey('kept')), false);
  t.equal(reloads(), 1);
  t.end();
});

void t.test(
  'StaticKeys: each re-read is counted by result; a broken version fails (and is logged) once, not once a second',
  (t) => {
    const clock = new FakeClock();
    const logs = captureLogs();
    const file = keyFile(t, { acme: [hashKey('kept')] });
    const counted: string[] = [];
    const keys = new StaticKeys(
      file.path,
      createLogger({ level: 'info', destination: logs.stream }),
      () => clock.now(),
      (result) => counted.push(result),
    );
    t.same(counted, [], 'the start-up load is not a reload');
    file.write('{"acme": [');
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      t.equal(keys.has(acme, hashKey('kept')), true);
    }
    t.same(counted, ['error'], 'five checks of one broken version: one failure');
    rmSync(file.path);
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      keys.has(acme, hashKey('kept'));
    }
    t.same(counted, ['error', 'error'], 'a deleted file: one more failure');
    file.write(JSON.stringify({ acme: [hashKey('fixed')] }));
    clock.advance(1000);
    t.equal(keys.has(acme, hashKey('fixed')), true);
    t.same(counted, ['error', 'error', 'ok']);
    t.equal(
      logs.lines().filter((line) => line['level'] === 50).length,
      2,
      'one error line per failed version',
    );
    t.end();
  },
);
