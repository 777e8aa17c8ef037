// The circuit breaker in the client: opens on origin failures, fails fast without a request, half-opens on the clock.
import type { ServerResponse } from 'node:http';
import t from 'tap';
import { asWorkspaceId, type WorkspaceId } from '../../../src/brands.js';
import { startOrigin } from '../../helpers/origin-server.js';
import { recordingFixture } from '../../helpers/recording-fixture.js';
import { harness, thrown } from '../../helpers/upstream-harness.js';

const acme = asWorkspaceId('acme') as WorkspaceId;
const beta = asWorkspaceId('beta') as WorkspaceId;
const KEY = 'sk_live_caller_key_0123456789';
const ID = '0b9c5e52-6f0e-4f7a-9a3c-1d2e3f405162';
const BREAKER = { retries: 0, breaker: { failureThreshold: 2, resetTimeout: '10s' } };

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

void t.test(
  'opens after N failures from several workspaces, answers 503 without reaching the origin, half-opens, closes on success',
  async (t) => {
    let mode: 'fail' | 'ok' | 'hold' = 'fail';
    let release: (() => void) | undefined;
    const origin = await startOrigin(t, (_req, res) => {
      if (mode === 'fail') return json(res, 500, { error: 'boom' });
      if (mode === 'hold') return void (release = () => json(res, 200, recordingFixture()));
      json(res, 200, recordingFixture());
    });
    const h = harness(t, `${origin.url}/{workspace}/v2`, BREAKER);
    const target = origin.url;
    t.same(await h.circuit(), { [target]: 0 }, 'closed to begin with');

    // One failure each from two workspaces: the origin's, not one tenant's, so its circuit opens.
    for (const workspace of [acme, beta])
      t.equal(
        (await thrown(() => h.upstream.fetchRecording(workspace, ID, KEY))).code,
        'UPSTREAM_UNREACHABLE',
      );
    t.same(await h.circuit(), { [target]: 2 }, 'open');
    const open = await thrown(() => h.upstream.fetchRecording(acme, ID, KEY));
    t.equal(open.code, 'CIRCUIT_OPEN');
    t.equal(open.status, 503);
    t.equal(open.retryAfter, 10, 'seconds until half-open');
    t.equal(origin.requests, 2, 'the open circuit kept the request from the origin');

    h.clock.ms += 10_000;
    mode = 'hold';
    const trial = h.upstream.fetchRecording(acme, ID, KEY);
    while (release === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
    t.same(await h.circuit(), { [target]: 1 }, 'half-open during the trial');
    t.equal(
      (await thrown(() => h.upstream.fetchList(acme, { pageNumber: 1, pageSize: 30 }, KEY))).code,
      'CIRCUIT_OPEN',
      'one trial at a time',
    );
    release();
    t.equal((await trial).status, 200);
    t.same(await h.circuit(), { [target]: 0 }, 'closed after the trial succeeded');
    mode = 'ok';
    t.equal((await h.upstream.fetchRecording(acme, ID, KEY)).status, 200);
    t.equal(origin.requests, 4);
    t.same(await h.outcomes(), {
      'recording:unreachable': 2,
      'recording:circuit_open': 1,
      'list:circuit_open': 1,
      'recording:ok': 2,
    });
  },
);

void t.test('404, 401 and 429 never open it; timeouts and invalid bodies do', async (t) => {
  const plan = [404, 401, 403, 429, 404];
  const origin = await startOrigin(t, (_req, res, i) => {
    const status = plan[i];
    if (status !== undefined) return json(res, status, { error: 'x' });
    if (i === plan.length) return res.end('not json');
    // then hang: a timeout
  });
  const h = harness(t, `${origin.url}/{workspace}`, {
    ...BREAKER,
    timeouts: { deadline: '200ms' },
  });
  for (let i = 0; i < plan.length; i++)
    await h.upstream.fetchRecording(acme, ID, KEY).catch(() => undefined);
  t.equal(origin.requests, plan.length, 'every one reached the origin');
  t.equal((await thrown(() => h.upstream.fetchRecording(acme, ID, KEY))).code, 'UPSTREAM_INVALID');
  t.equal((await thrown(() => h.upstream.fetchRecording(acme, ID, KEY))).code, 'UPSTREAM_TIMEOUT');
  t.equal(
    (await thrown(() => h.upstream.fetchRecording(acme, ID, KEY))).code,
    'CIRCUIT_OPEN',
    'invalid + timeout = 2 failures',
  );
  t.equal(origin.requests, plan.length + 2);
});

void t.test(
  'one breaker per origin; the gauge shows the worst under the template label',
  async (t) => {
    const origin = await startOrigin(t, (req, res) =>
      req.headers.host?.startsWith('acme.')
        ? json(res, 500, {})
        : json(res, 200, recordingFixture()),
    );
    const h = harness(t, `http://{workspace}.localhost:${origin.port}/v2`, BREAKER);
    for (let i = 0; i < 2; i++) await thrown(() => h.upstream.fetchRecording(acme, ID, KEY));
    t.equal(
      (await thrown(() => h.upstream.fetchRecording(acme, ID, KEY))).code,
      'CIRCUIT_OPEN',
      'acme is open',
    );
    t.equal(
      (await h.upstream.fetchRecording(beta, ID, KEY)).status,
      200,
      'beta, another origin, is unaffected',
    );
    t.same(
      await h.circuit(),
      { [`http://{workspace}.localhost:${origin.port}`]: 0 },
      'one bounded label; one workspace alone never opens an origin',
    );
    t.equal(
      (await h.metrics.workspaceCircuitsOpen.get()).values[0]?.value,
      1,
      "acme's own circuit is what opened",
    );
  },
);
