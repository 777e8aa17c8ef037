/**
 * recgw as operators run it: the compiled command in a child process, judged by exit code,
 * stdout and stderr. purge and inspect talk to a gateway this test starts; hash-key's output
 * is used as a real key file; check-config finds every problem without listening. No secret
 * (API key, admin token) ever appears in what recgw prints.
 */
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashKey } from '../../../src/auth/key-hash.js';
import { parseKeyFile } from '../../../src/auth/static-keys.js';
import { startGateway } from '../../helpers/gateway.js';
import { freePort } from '../../helpers/redis.js';
import { recgw } from './run-recgw.js';

const TOKEN = 'test-admin-token';

void t.test('usage errors exit 2 with a hint; --help exits 0', async (t) => {
  const none = await recgw([]);
  t.equal(none.code, 2);
  t.match(none.stderr, /no command given/);
  t.equal((await recgw(['frob'])).code, 2);
  t.equal((await recgw(['purge'])).code, 2);
  t.equal((await recgw(['inspect', 'acme', '--page-size'])).code, 2, 'a flag without its value');
  t.equal((await recgw(['purge', 'acme', '--force'])).code, 2, 'an unknown flag');
  const short = await recgw(['purge', 'acme', '-f']);
  t.equal(short.code, 2, 'an unknown short option is not taken for a recording');
  t.match(short.stderr, /recgw: purge: Unknown option '-f'/);
  t.match((await recgw(['--json', 'purge', 'acme'])).stderr, /the command comes first/);
  t.equal((await recgw(['inspect', '--help'])).code, 0);
  const help = await recgw(['--help']);
  t.equal(help.code, 0);
  t.match(help.stdout, /purge <workspace>/);
  t.match(help.stdout, /exit codes/);
});

void t.test('hash-key: the key file form the gateway accepts; the key never printed', async (t) => {
  const key = 'sim-acme-key-1';
  const plain = await recgw(['hash-key'], {}, `${key}\n`);
  t.equal(plain.code, 0);
  t.equal(plain.stdout, `${hashKey(key)}\n`, 'one trailing newline is not part of the key');
  t.notOk(plain.stdout.includes(key) || plain.stderr.includes(key));
  const json = await recgw(['hash-key', '--json', '--workspace', 'acme'], {}, key);
  t.same(JSON.parse(json.stdout), { sha256: hashKey(key), workspace: 'acme' });
  const snippet = await recgw(['hash-key', '--workspace', 'acme'], {}, key);
  t.same([...parseKeyFile(snippet.stdout).get('acme')!], [hashKey(key)]);

  // The printed file admits the key at a gateway in static mode.
  const dir = mkdtempSync(join(tmpdir(), 'recgw-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'keys.json');
  writeFileSync(file, snippet.stdout);
  const gw = await startGateway(t, { config: { auth: { mode: 'static', keyFile: file } } });
  t.equal((await gw.get('/api/external/v2/recordings?page_size=1', { key })).status, 200);
  t.equal(
    (await gw.get('/api/external/v2/recordings?page_size=1', { key: 'sim-acme-key-2' })).status,
    401,
    'an unlisted key is refused',
  );

  const empty = await recgw(['hash-key'], {}, '');
  t.equal(empty.code, 1);
  t.match(empty.stderr, /no key on stdin/);
  const spaced = await recgw(['hash-key'], {}, 'two words');
  t.equal(spaced.code, 1);
  t.notOk(spaced.stderr.includes('two words'), 'a refused key is not echoed either');
  const argument = await recgw(['hash-key', 'secret-on-the-command-line']);
  t.equal(argument.code, 2, 'a key as an argument is refused');
  t.notOk(argument.stderr.includes('secret-on-the-command-line'));
});

void t.test('check-config: valid → 0 without listening; every problem listed → 1', async (t) => {
  // Start-up would fail on a port in use; the check does not listen, so it must pass.
  const held = createServer();
  await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
  t.teardown(() => held.close());
  const port = String((held.address() as { port: number }).port);
  const ok = await recgw(['check-config'], { PORT: port, ADMIN_TOKEN: 'a-secret-token' });
  t.equal(ok.code, 0, ok.stderr);
  t.match(ok.stdout, /configuration is valid/);

  const dir = mkdtempSync(join(tmpdir(), 'recgw-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, 'cache:\n  ttl:\n    list: soon\nlisting:\n  maxPageSiz: 10\n');
  const bad = await recgw(['check-config'], {
    GATEWAY_CONFIG: file,
    PORT: 'eighty',
    ADMIN_TOKEN: 'a-secret-token',
  });
  t.equal(bad.code, 1);
  t.match(bad.stderr, /cache\.ttl\.list: "soon" is not a duration/);
  t.match(bad.stderr, /listing\.maxPageSiz: unknown key/);
  t.match(bad.stderr, /server\.port: .*\(from env PORT\)/);
  t.notOk(bad.stderr.includes('a-secret-token') || bad.stdout.includes('a-secret-token'));
  const json = await recgw(['check-config', '--json'], { GATEWAY_CONFIG: file });
  t.equal(json.code, 1);
  const report = JSON.parse(json.stdout);
  t.equal(report.valid, false);
  t.equal(report.problems.length, 2);

  // Files the config names are read as start-up reads them.
  writeFileSync(file, `auth:\n  mode: static\n  keyFile: ${join(dir, 'missing.json')}\n`);
  const missing = await recgw(['check-config'], { GATEWAY_CONFIG: file });
  t.equal(missing.code, 1);
  t.match(missing.stderr, /missing\.json/);
});

void t.test("check-config FILE judges FILE, in GATEWAY_CONFIG's place", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'recgw-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'cache:\n  ttl:\n    list: soon\n');
  const good = join(dir, 'good.yaml');
  writeFileSync(good, 'cache:\n  ttl:\n    list: 10s\n');

  const broken = await recgw(['check-config', bad]);
  t.equal(broken.code, 1, 'a broken file is not called valid');
  t.match(broken.stderr, /cache\.ttl\.list: "soon" is not a duration/);
  t.notMatch(broken.stdout, /valid/);
  const json = await recgw(['check-config', bad, '--json']);
  t.same(JSON.parse(json.stdout).valid, false);
  // The file given wins over GATEWAY_CONFIG, as -c does for nginx.
  const over = await recgw(['check-config', bad], { GATEWAY_CONFIG: good });
  t.equal(over.code, 1);
  const valid = await recgw(['check-config', good], { GATEWAY_CONFIG: bad });
  t.equal(valid.code, 0, valid.stderr);
  t.match(valid.stdout, new RegExp(`configuration is valid \\(config/default\\.yaml \\+ ${good}`));
  const missing = await recgw(['check-config', join(dir, 'missing.yaml')]);
  t.equal(missing.code, 1);
  t.match(missing.stderr, /cannot read .*missing\.yaml \(ENOENT\)/);
  const notYaml = join(dir, 'not.yaml');
  writeFileSync(notYaml, 'cache: [\n');
  t.match((await recgw(['check-config', notYaml])).stderr, /not valid YAML/);
  const extra = await recgw(['check-config', good, bad]);
  t.equal(extra.code, 2, 'one file at most');
  t.match(extra.stderr, /usage: recgw check-config \[FILE\]/);
});

void t.test(
  'purge and inspect against a running gateway; refusals exit 1, no gateway exits 3',
  async (t) => {
    const gw = await startGateway(t);
    const env = { ADMIN_URL: `http://127.0.0.1:${gw.adminPort}`, ADMIN_TOKEN: TOKEN };
    const recording = gw.sim.data['acme']![2]!;
    await gw.get(`/api/external/v2/recordings/${recording.id}`);

    const inspected = await recgw(['inspect', 'acme', recording.id, '--json'], env);
    t.equal(inspected.code, 0, inspected.stderr);
    t.equal(JSON.parse(inspected.stdout).tiers.l1.present, true);
    const human = await recgw(['inspect', 'acme', recording.id], env);
    t.match(human.stdout, /l1: status 200, stored .* fresh for \d+s/);
    t.match(human.stdout, /l2: not configured/);
    const page = await recgw(
      ['inspect', 'acme', '--page-number', '2', '--page-size', '10', '--json'],
      env,
    );
    t.same(JSON.parse(page.stdout).resource, { page_number: 2, page_size: 10 });

    const purged = await recgw(['purge', 'acme', recording.id], env);
    t.equal(purged.code, 0, purged.stderr);
    t.match(purged.stdout, new RegExp(`purged recording ${recording.id} of acme`));
    t.equal(
      JSON.parse((await recgw(['inspect', 'acme', recording.id, '--json'], env)).stdout).tiers.l1
        .present,
      false,
      'gone after the purge',
    );
    const whole = await recgw(['purge', 'acme', '--json'], env);
    t.equal(JSON.parse(whole.stdout).ok, true);
    t.same(JSON.parse(whole.stdout).purged, { workspace: 'acme', recording: null, soft: false });

    const lists = await recgw(['purge', 'acme', '--lists', '--json'], env);
    t.equal(lists.code, 0, lists.stderr);
    t.same(JSON.parse(lists.stdout).purged, {
      workspace: 'acme',
      recording: null,
      lists: true,
      soft: false,
    });
    const onePage = await recgw(['purge', 'acme', '--page-number', '1', '--page-size', '30'], env);
    t.match(onePage.stdout, /^purged list page 1 \(size 30\) of acme \(generation /);
    const folder = await recgw(['purge', 'acme', '--folder', 'no-such-folder', '--soft'], env);
    t.equal(folder.code, 0, folder.stderr);
    t.match(
      folder.stdout,
      /^soft-purged \(marked stale\) folder no-such-folder of acme .*0 cached entries matched/,
    );
    t.match(folder.stdout, /nothing was dropped/);
    const tag = await recgw(['purge', 'acme', '--tag', 'some-tag', '--json'], env);
    t.same(JSON.parse(tag.stdout).purged, {
      workspace: 'acme',
      recording: null,
      tag_id: 'some-tag',
      soft: false,
    });
    t.equal(
      (await recgw(['purge', 'acme', '--folder', 'a', '--tag', 'b'], env)).code,
      2,
      'a folder and a tag at once',
    );
    t.equal(
      (await recgw(['purge', 'acme', recording.id, '--lists'], env)).code,
      2,
      'two forms at once',
    );
    t.equal(
      (await recgw(['purge', 'acme', '--page-number', '1'], env)).code,
      2,
      'a page number without its size',
    );

    const wrong = await recgw(['purge', 'acme'], { ...env, ADMIN_TOKEN: 'not-the-token' });
    t.equal(wrong.code, 1);
    t.match(wrong.stderr, /ADMIN_UNAUTHORIZED/);
    const badInput = await recgw(['inspect', 'ACME'], env);
    t.equal(badInput.code, 1);
    t.match(badInput.stderr, /BAD_REQUEST/);
    const noToken = await recgw(['purge', 'acme'], { ADMIN_URL: env.ADMIN_URL });
    t.equal(noToken.code, 2);
    t.match(noToken.stderr, /ADMIN_TOKEN is not set/);
    const closed = await recgw(['purge', 'acme'], {
      ...env,
      ADMIN_URL: `http://127.0.0.1:${await freePort()}`,
    });
    t.equal(closed.code, 3);
    t.match(closed.stderr, /cannot reach the admin API .*ECONNREFUSED/);
    for (const run of [inspected, human, purged, whole, wrong, badInput, noToken, closed]) {
      t.notOk(
        run.stdout.includes(TOKEN) || run.stderr.includes(TOKEN),
        'the token is never printed',
      );
    }
  },
);
