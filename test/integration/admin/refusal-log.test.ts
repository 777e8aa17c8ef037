/**
 * Refused admin requests are logged at warn, one line per reason per interval with the count of
 * those left out, and never with the token. Time is a fake clock: the interval is crossed by
 * moving it, not by sleeping.
 */
import t from 'tap';
import { REFUSAL_LOG_INTERVAL_MS } from '../../../src/http/refusal-log.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';

const GUESS = 'a-guessed-token-7f3a9c';

function refusals(gw: TestGateway): Array<Record<string, unknown>> {
  return gw.logs.lines().filter((line) => line['msg'] === 'admin request refused');
}

void t.test('wrong and missing tokens: warn, rate-limited per reason, no token', async (t) => {
  const clock = new FakeClock();
  const gw = await startGateway(t, { clock });
  const wrong = { authorization: `Bearer ${GUESS}`, 'content-type': 'application/json' };
  const purge = (headers: Record<string, string>) =>
    gw.admin('/admin/purge', { method: 'POST', headers, body: '{"workspace":"acme"}' });

  for (let i = 0; i < 5; i++) t.equal((await purge(wrong)).status, 401);
  for (let i = 0; i < 3; i++) t.equal((await gw.admin('/admin/cache?workspace=acme')).status, 401);
  let lines = refusals(gw);
  t.equal(lines.length, 2, 'one line per reason within the interval');
  t.match(lines[0], {
    level: 40,
    reason: 'token-wrong',
    method: 'POST',
    path: '/admin/purge',
    remote: /127\.0\.0\.1/,
    suppressed: 0,
  });
  t.match(lines[1], { level: 40, reason: 'token-missing', path: '/admin/cache', suppressed: 0 });

  clock.advance(REFUSAL_LOG_INTERVAL_MS - 1);
  await purge(wrong);
  t.equal(refusals(gw).length, 2, 'still within the interval');
  clock.advance(1);
  await purge(wrong);
  await purge({ authorization: 'Basic abc' });
  lines = refusals(gw);
  t.equal(lines.length, 4);
  t.match(lines[2], { reason: 'token-wrong', suppressed: 5 }, 'the ones left out, counted');
  t.match(lines[3], { reason: 'token-missing', suppressed: 2 });

  t.equal((await purge({ authorization: 'Bearer test-admin-token' })).status, 200);
  t.equal(refusals(gw).length, 4, 'an accepted request is not a refusal');
  t.notOk(gw.logs.text().includes(GUESS), 'the guessed token is never logged');
  t.notOk(gw.logs.text().includes('test-admin-token'), 'nor the real one');
});

void t.test('no admin token configured: the 403s are logged too', async (t) => {
  const gw = await startGateway(t, { config: { admin: { token: null } } });
  const res = await gw.admin('/admin/purge', {
    method: 'POST',
    headers: { authorization: `Bearer ${GUESS}` },
    body: '{"workspace":"acme"}',
  });
  t.equal(res.status, 403);
  t.match(refusals(gw), [{ level: 40, reason: 'token-not-configured', path: '/admin/purge' }]);
  t.notOk(gw.logs.text().includes(GUESS));
});
