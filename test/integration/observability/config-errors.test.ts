// Invalid configuration stops the real process with exit code 1 and one message naming every bad key path.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { builtMain, spawnGateway } from './gateway-process.js';

const BAD = `
server:
  port: 70000
  hedersTimeout: 5s
cache:
  ttl:
    list: soon
  l1:
    maxBytes: 12 parsecs
listing:
  defaultPageSize: 500
log:
  level: loud
`;

void t.test(
  'several bad values in the file: exit 1, one message naming each key path',
  async (t) => {
    const main = await builtMain();
    const file = join(t.testdir(), 'bad.yaml');
    writeFileSync(file, BAD);
    const gw = spawnGateway(t, main, { GATEWAY_CONFIG: file, ADMIN_TOKEN: 'config-errors-token' });
    const exit = await gw.exited;
    t.same(exit, { code: 1, signal: null });
    const message = gw.stderr();
    t.match(message, /^invalid configuration:\n/, 'one message');
    t.equal(message.match(/invalid configuration/g)?.length, 1, 'printed once');
    const lines = message
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.trim());
    t.same(
      lines.map((line) => line.split(':')[0]).sort(),
      [
        'cache.l1.maxBytes',
        'cache.ttl.list',
        'listing.defaultPageSize',
        'log.level',
        'server.hedersTimeout',
        'server.port',
      ],
      'every bad key path, and only those',
    );
    t.ok(
      lines.every((line) => /^[\w.]+: \S/.test(line)),
      'each with its reason',
    );
    t.equal(gw.stdout(), '', 'nothing started, nothing logged');
    t.notOk(message.includes('config-errors-token'), 'the admin token is not echoed');
  },
);

void t.test('a bad environment value and a missing file stop start-up too', async (t) => {
  const main = await builtMain();
  const badPort = spawnGateway(t, main, { PORT: 'abc', ADMIN_PORT: '0' });
  t.same(await badPort.exited, { code: 1, signal: null });
  t.match(badPort.stderr(), /^invalid configuration:\n {2}server\.port: .*\(from env PORT\)\n$/);

  const missing = spawnGateway(t, main, {
    GATEWAY_CONFIG: join(t.testdir(), 'nope.yaml'),
    PORT: '0',
    ADMIN_PORT: '0',
  });
  t.same(await missing.exited, { code: 1, signal: null });
  t.match(missing.stderr(), /GATEWAY_CONFIG: cannot read .*nope\.yaml \(ENOENT\)/);
});
