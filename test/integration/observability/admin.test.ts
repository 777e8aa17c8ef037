// The admin listener over real sockets: health, readiness through shutdown, purge auth and bodies, metrics, 404s.
import t from 'tap';
import { startGateway } from '../../helpers/gateway.js';
import { startPrivateRedis, waitFor } from '../../helpers/redis.js';

const LIST = '/api/external/v2/recordings?page_size=2';
const BEARER = { authorization: 'Bearer test-admin-token' };

void t.test(
  '/healthz and /readyz answer 200 when up; /metrics is Prometheus text; other paths 404',
  async (t) => {
    const gw = await startGateway(t);
    const health = await gw.admin('/healthz');
    t.equal(health.status, 200);
    t.same(health.json(), { status: 'ok' });
    const ready = await gw.admin('/readyz');
    t.equal(ready.status, 200);
    t.same(ready.json(), { status: 'ready', redis: 'not-configured' });
    const metrics = await gw.admin('/metrics');
    t.equal(metrics.status, 200);
    t.equal(metrics.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    t.match(metrics.text, /^# TYPE recgw_http_requests_total counter$/m);
    for (const path of [
      '/',
      '/metrics/extra',
      '/admin',
      '/admin/purge/acme',
      '/api/external/v2/recordings',
    ]) {
      const missing = await gw.admin(path);
      t.equal(missing.status, 404, `${path} → 404`);
      t.same(missing.json(), { error: 'Not found', code: 'NOT_FOUND' });
    }
    const wrongMethod = await gw.admin('/admin/purge');
    t.equal(wrongMethod.status, 405);
    t.equal(wrongMethod.headers['allow'], 'POST');
  },
);

void t.test(
  '/readyz is 503 while the app drains an in-flight request, which still completes',
  async (t) => {
    const gw = await startGateway(t);
    gw.sim.faults.set({ kind: 'latency', ms: 500 });
    const slow = gw.get(LIST);
    while (gw.sim.counters.total === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const closing = gw.app.close();
    const draining = await gw.admin('/readyz');
    t.equal(draining.status, 503);
    t.same(draining.json(), { status: 'not-ready', redis: 'not-configured' });
    t.equal((await gw.admin('/metrics')).status, 200, 'still scraped while draining');
    t.equal((await slow).status, 200, 'the in-flight request completes');
    await closing;
    await t.rejects(gw.admin('/healthz'), 'the admin listener is closed once drained');
  },
);

void t.test('purge without a configured token is off, and says so', async (t) => {
  const gw = await startGateway(t, { config: { admin: { token: null } } });
  const res = await gw.admin('/admin/purge', {
    method: 'POST',
    body: '{"workspace":"acme"}',
    headers: BEARER,
  });
  t.equal(res.status, 403);
  t.same(res.json(), {
    error: 'Purge is disabled: no admin token is configured (set ADMIN_TOKEN)',
    code: 'PURGE_DISABLED',
  });
});

void t.test(
  'purge with a missing or wrong token: 401 with WWW-Authenticate, nothing purged',
  async (t) => {
    const gw = await startGateway(t);
    await gw.get(LIST);
    for (const headers of [
      {},
      { authorization: 'Bearer wrong' },
      { authorization: 'Basic dGVzdC1hZG1pbi10b2tlbg==' },
      { authorization: 'test-admin-token' },
      { authorization: 'Bearer test-admin-token2' },
    ]) {
      const res = await gw.admin('/admin/purge', {
        method: 'POST',
        body: '{"workspace":"acme"}',
        headers,
      });
      t.equal(res.status, 401, JSON.stringify(headers));
      t.equal(res.headers['www-authenticate'], 'Bearer');
      t.same(res.json(), {
        error: 'A valid admin bearer token is required',
        code: 'ADMIN_UNAUTHORIZED',
      });
    }
    const calls = gw.sim.counters.total;
    t.match((await gw.get(LIST)).headers['cache-status'], /hit/, 'still cached');
    t.equal(gw.sim.counters.total, calls);
  },
);

void t.test(
  'purge bodies that are not a workspace (and optional recording) → 400; oversized → 413',
  async (t) => {
    const gw = await startGateway(t);
    const bodies: Array<[string, RegExp]> = [
      ['', /Body must be JSON/],
      ['not json', /Body must be JSON/],
      ['[]', /"workspace" must be a workspace name/],
      ['null', /"workspace" must be a workspace name/],
      ['{}', /"workspace" must be a workspace name/],
      ['{"workspace": 42}', /"workspace" must be a workspace name/],
      ['{"workspace": "Not A Workspace"}', /"workspace" must be a workspace name/],
      [
        '{"workspace": "acme", "recording": "../etc"}',
        /"recording" must be a UUID or a public link code/,
      ],
      ['{"workspace": "acme", "recording": 7}', /"recording" must be a UUID or a public link code/],
    ];
    for (const [body, message] of bodies) {
      const res = await gw.admin('/admin/purge', { method: 'POST', body, headers: BEARER });
      t.equal(res.status, 400, JSON.stringify(body));
      t.match(res.json(), { error: message, code: 'BAD_REQUEST' });
    }
    const huge = await gw.admin('/admin/purge', {
      method: 'POST',
      body: JSON.stringify({ workspace: 'acme', pad: 'x'.repeat(64 * 1024) }),
      headers: BEARER,
    });
    t.equal(huge.status, 413, 'an oversized body is refused, not acted on');
    t.same(huge.json(), { error: 'Body must be at most 4096 bytes', code: 'PAYLOAD_TOO_LARGE' });
    t.equal(huge.headers['connection'], 'close');
  },
);

void t.test(
  'a workspace purge sends the next request upstream; a recording purge only that recording',
  async (t) => {
    const gw = await startGateway(t);
    const recording = gw.sim.data['acme']![50]!;
    await gw.get(LIST);
    await gw.get(`/api/external/v2/recordings/${recording.id}`);
    await gw.get(LIST, { workspace: 'globex' });
    let calls = gw.sim.counters.total;
    t.match((await gw.get(LIST)).headers['cache-status'], /hit/);
    t.equal(gw.sim.counters.total, calls, 'cached before the purge');

    const one = await gw.admin('/admin/purge', {
      method: 'POST',
      body: JSON.stringify({ workspace: 'acme', recording: recording.id.toUpperCase() }),
      headers: BEARER,
    });
    t.equal(one.status, 200);
    t.match(one.json(), { purged: { workspace: 'acme', recording: recording.id } });
    t.equal(
      (await gw.get(`/api/external/v2/recordings/${recording.id}`)).headers['cache-status'],
      'recgw; fwd=uri-miss; fwd-status=200; stored; detail=cold',
    );
    t.equal(gw.sim.counters.total, calls + 1, 'the purged recording was fetched again');
    calls = gw.sim.counters.total;

    const all = await gw.admin('/admin/purge', {
      method: 'POST',
      body: '{"workspace":"acme"}',
      headers: BEARER,
    });
    t.equal(all.status, 200);
    t.match(all.json(), { purged: { workspace: 'acme', recording: null } });
    const after = await gw.get(LIST);
    t.equal(after.status, 200);
    t.equal(
      after.headers['cache-status'],
      'recgw; fwd=uri-miss; fwd-status=200; stored; detail=cold',
      'the list is fetched again',
    );
    t.equal(gw.sim.counters.total, calls + 1, 'exactly one upstream call');
    t.match(
      (await gw.get(LIST, { workspace: 'globex' })).headers['cache-status'],
      /hit/,
      'another workspace keeps its entries',
    );
    t.ok(
      gw.logs
        .lines()
        .some(
          (line) =>
            line['msg'] === 'purged' &&
            line['workspace'] === 'acme' &&
            line['component'] === 'admin',
        ),
      'the purge is logged',
    );
  },
);

void t.test('Redis down is degraded, still ready; redis_up follows the connection', async (t) => {
  const redis = await startPrivateRedis(t);
  const gw = await startGateway(t, {
    redisUrl: redis.url,
    config: { cache: { redis: { keyPrefix: redis.keyPrefix } } },
  });
  await waitFor(async () => (await gw.admin('/readyz')).json().redis === 'up', 5000, 'redis up');
  t.same((await gw.admin('/readyz')).json(), { status: 'ready', redis: 'up' });
  t.match((await gw.admin('/metrics')).text, /^recgw_redis_up 1$/m);
  await redis.stop();
  await waitFor(
    async () => (await gw.admin('/readyz')).json().redis === 'down',
    5000,
    'redis down noticed',
  );
  const degraded = await gw.admin('/readyz');
  t.equal(degraded.status, 200, 'still ready: L1 and the upstream answer');
  t.same(degraded.json(), { status: 'degraded', redis: 'down' });
  t.match((await gw.admin('/metrics')).text, /^recgw_redis_up 0$/m);
  t.equal((await gw.get(LIST)).status, 200, 'requests are still served');
});

void t.test(
  'purge with Redis down: 503 PURGE_UNAVAILABLE, and this instance purged nothing either',
  async (t) => {
    const redis = await startPrivateRedis(t);
    const gw = await startGateway(t, {
      redisUrl: redis.url,
      config: { cache: { redis: { keyPrefix: redis.keyPrefix } } },
    });
    await waitFor(() => gw.app.redis?.up === true, 5000, 'redis up');
    await gw.get(LIST);
    await redis.stop();
    await waitFor(() => gw.app.redis?.up === false, 5000, 'redis down noticed');
    const res = await gw.admin('/admin/purge', {
      method: 'POST',
      body: '{"workspace":"acme"}',
      headers: BEARER,
    });
    t.equal(res.status, 503);
    t.same(res.json(), {
      error:
        'Purge could not be confirmed by the shared cache; retry (a repeated purge is harmless)',
      code: 'PURGE_UNAVAILABLE',
    });
    const calls = gw.sim.counters.total;
    t.match((await gw.get(LIST)).headers['cache-status'], /hit/, 'the list is still cached here');
    t.equal(gw.sim.counters.total, calls);
  },
);
