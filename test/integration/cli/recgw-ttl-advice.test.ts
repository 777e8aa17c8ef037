/**
 * recgw ttl-advice as operators run it (the compiled command in a child process): a table per
 * resource, or the admin answer itself with --json; refusals exit 1 naming the code, usage
 * errors 2, no gateway 3. The token is never printed.
 */
import t from 'tap';
import { startGateway } from '../../helpers/gateway.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { freePort } from '../../helpers/redis.js';
import { recgw } from './run-recgw.js';

const TOKEN = 'test-admin-token';

void t.test('recgw ttl-advice against a running gateway', async (t) => {
  const clock = new FakeClock();
  const gw = await startGateway(t, {
    clock,
    config: { cache: { ttl: { recording: '10s' }, refreshAhead: false } },
  });
  const env = { ADMIN_URL: `http://127.0.0.1:${gw.adminPort}`, ADMIN_TOKEN: TOKEN };
  const recording = gw.sim.data['acme']![1]!;
  await gw.get(`/api/external/v2/recordings/${recording.id}`);
  clock.advance(60_000);
  await gw.get(`/api/external/v2/recordings/${recording.id}`);

  const json = await recgw(['ttl-advice', 'acme', '--json'], env);
  t.equal(json.code, 0, json.stderr);
  const advice = JSON.parse(json.stdout);
  t.equal(advice.workspace, 'acme');
  t.equal(advice.resources[1].change_rate.observations.unchanged, 1);

  const human = await recgw(['ttl-advice', 'acme'], env);
  t.equal(human.code, 0, human.stderr);
  t.comment(human.stdout);
  t.match(human.stdout, /^acme: \d+ s of requests, 1 key simulated/);
  t.match(
    human.stdout,
    /recording: TTL 10s, 0\.0333 requests\/s; data changes no change seen \(0 changed, 1 unchanged/,
  );
  t.match(human.stdout, /TTL +hit ratio +upstream\/s +stale share +in budget/);
  t.match(human.stdout, /\* 10s {2,}0\.0%/, 'the current TTL marked: the second read a miss');
  t.match(human.stdout, / 2m {2,}50\.\d%/, 'a hit at 2 m');
  t.match(human.stdout, /recommended: 1h \(the longest TTL within cache.ttlBudget\)/);
  t.match(
    human.stdout,
    /list: .*\n.*\n {2}recommended: none: no request for this resource seen yet/,
  );

  const unknown = await recgw(['ttl-advice', 'globex'], env);
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /WORKSPACE_NOT_OBSERVED/);
  const bad = await recgw(['ttl-advice', 'ACME!'], env);
  t.equal(bad.code, 1);
  t.match(bad.stderr, /BAD_REQUEST/);
  t.equal((await recgw(['ttl-advice'], env)).code, 2, 'no workspace');
  t.equal((await recgw(['ttl-advice', 'acme', 'globex'], env)).code, 2, 'two workspaces');
  const wrong = await recgw(['ttl-advice', 'acme'], { ...env, ADMIN_TOKEN: 'not-the-token' });
  t.equal(wrong.code, 1);
  t.match(wrong.stderr, /ADMIN_UNAUTHORIZED/);
  const closed = await recgw(['ttl-advice', 'acme'], {
    ...env,
    ADMIN_URL: `http://127.0.0.1:${await freePort()}`,
  });
  t.equal(closed.code, 3);
  for (const run of [json, human, unknown, bad, wrong, closed])
    t.notOk(run.stdout.includes(TOKEN) || run.stderr.includes(TOKEN), 'the token is never printed');
});
