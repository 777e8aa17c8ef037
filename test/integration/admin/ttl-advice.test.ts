/**
 * GET /admin/ttl-advice: behind the admin token; bad input a JSON 400 naming the parameter, a
 * workspace never asked for a 404; the answer (checked against the OpenAPI document by the test
 * gateway) follows the requests and revalidations seen: unknown change rate, then none seen,
 * then one.
 */
import t from 'tap';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import type { components } from '../../contract/recordings-gateway-api.js';

type TtlAdvice = components['schemas']['TtlAdvice'];

const AUTH = { authorization: 'Bearer test-admin-token' };
const R = '/api/external/v2/recordings';

function advise(gw: TestGateway, query: string, headers: Record<string, string> = AUTH) {
  return gw.admin(`/admin/ttl-advice?${query}`, { headers });
}

void t.test('refusals: token, bad input, unknown workspace, method', async (t) => {
  const gw = await startGateway(t);
  const missing = await advise(gw, 'workspace=acme', {});
  t.equal(missing.status, 401);
  t.equal(missing.headers['www-authenticate'], 'Bearer');
  t.equal(missing.json().code, 'ADMIN_UNAUTHORIZED');
  t.equal((await advise(gw, 'workspace=acme', { authorization: 'Bearer nope' })).status, 401);
  for (const [query, names] of [
    ['', 'workspace'],
    ['workspace=', 'workspace'],
    ['workspace=ACME!', 'workspace'],
    ['workspace=acme&workspace=globex', 'workspace'],
    ['workspace=acme&ttl=5s', 'ttl'],
  ] as const) {
    const answer = await advise(gw, query);
    t.equal(answer.status, 400, query);
    t.equal(answer.json().code, 'BAD_REQUEST');
    t.match(answer.json().error, names, `${query}: the message names ${names}`);
  }
  const unknown = await advise(gw, 'workspace=initech');
  t.equal(unknown.status, 404);
  t.equal(unknown.json().code, 'WORKSPACE_NOT_OBSERVED');
  t.match(unknown.json().error, 'initech');
  const post = await gw.admin('/admin/ttl-advice?workspace=acme', {
    method: 'POST',
    headers: AUTH,
  });
  t.equal(post.status, 405);
  t.equal(post.headers['allow'], 'GET, HEAD');
  t.notMatch(gw.logs.text(), 'test-admin-token', 'the token is never logged');
});

void t.test('without an admin token configured: 403', async (t) => {
  const gw = await startGateway(t, { config: { admin: { token: null } } });
  const answer = await advise(gw, 'workspace=acme');
  t.equal(answer.status, 403);
  t.equal(answer.json().code, 'PURGE_DISABLED');
});

void t.test('the advice follows the requests and revalidations seen', async (t) => {
  const clock = new FakeClock();
  const gw = await startGateway(t, {
    clock,
    config: {
      cache: {
        ttl: { recording: '10s', list: '30s' },
        refreshAhead: false,
        staleWhileRevalidate: '0s',
        ttlBudget: { maxStaleShare: 0.05, maxUpstreamPerSecond: null },
      },
    },
  });
  const [first, second] = gw.sim.data['acme']!;
  const read = async (id: string): Promise<void> => {
    t.equal((await gw.get(`${R}/${id}`)).status, 200);
  };
  await read(first!.id);
  await read(second!.id);
  let advice = (await advise(gw, 'workspace=acme')).json() as TtlAdvice;
  t.same(
    advice.resources.map((r) => r.resource),
    ['list', 'recording'],
  );
  let recording = advice.resources[1]!;
  t.equal(recording.current_ttl_seconds, 10);
  t.equal(advice.resources[0]!.requests_per_second, 0, 'no list request');
  t.equal(recording.change_rate.per_second, null, 'no revalidation yet');
  t.equal(recording.recommended_ttl_seconds, null);
  t.match(recording.reason, 'change rate');
  t.ok(
    recording.candidates.some((c) => c.current && c.ttl_seconds === 10),
    'the current TTL',
  );
  t.equal(advice.resources[0]!.candidates.length, 0, 'no list request: no candidate');

  // Past the TTL: a revalidation that finds the data unchanged (a 304).
  clock.advance(11_000);
  await read(first!.id);
  advice = (await advise(gw, 'workspace=acme')).json() as TtlAdvice;
  recording = advice.resources[1]!;
  t.equal(recording.change_rate.per_second, 0);
  t.equal(recording.change_rate.observations.unchanged, 1);
  t.equal(recording.recommended_ttl_seconds, 3600, 'no change seen: the longest candidate');

  // Changed upstream, then revalidated: a change within the interval.
  gw.sim.changeRecording('acme', second!.id);
  clock.advance(11_000);
  await read(second!.id);
  advice = (await advise(gw, 'workspace=acme')).json() as TtlAdvice;
  recording = advice.resources[1]!;
  t.ok(recording.change_rate.per_second! > 0, `rate ${recording.change_rate.per_second}`);
  t.equal(recording.change_rate.observations.changed, 1);
  t.ok(
    recording.candidates.every((c, i, all) => i === 0 || c.ttl_seconds > all[i - 1]!.ttl_seconds),
    'shortest TTL first',
  );
  t.equal((await advise(gw, 'workspace=acme')).headers['cache-control'], 'no-store');
});
